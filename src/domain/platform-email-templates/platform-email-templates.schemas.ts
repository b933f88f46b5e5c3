import Type from 'typebox';
import { nameSchemas, Nullable, Uuid } from '../../operations/schemas.ts';
import { EmailTemplateDraft, emailTemplateDraftExample, EmailTemplateVersion, MessageKey } from '../email-templates/email-templates.schemas.ts';

// spec: Resources — a platform version is an organisation version without from_name, reply_to and text_part.
const orgOnly = ['from_name', 'reply_to', 'text_part'] as const;

// Any string: a malformed tag is a 422 from the service naming `language` (invalid content), where a path value
// failing its schema would be a 404.
const Language = Type.String({ description: 'BCP 47 language tag, 1 to 35 characters (e.g. `en`, `pt-BR`); case-insensitive. A malformed tag is a 422.' });

export const PlatformTemplateParams = Type.Object({ message_key: MessageKey, language: Language }, { additionalProperties: false });
export const PlatformVersionParams = Type.Object({ message_key: MessageKey, language: Language, version_id: Uuid() }, { additionalProperties: false });

export const PlatformEmailTemplateVersion = Type.Omit(EmailTemplateVersion, orgOnly, {
  additionalProperties: false,
  description: "A version of a platform email template: the deployment's wording, which organisations inherit unless they override it.",
});

export const PlatformEmailTemplateView = Type.Object(
  {
    message_key: Type.String(),
    title: Type.String(),
    description: Type.String(),
    category: Type.String(),
    critical: Type.Boolean(),
    language: Type.String({ description: 'The language tag, in conventional case.' }),
    template_id: Nullable(Uuid({ description: 'Null when the deployment has no template for this message and language.' })),
    draft: Nullable(PlatformEmailTemplateVersion),
    published: Nullable(PlatformEmailTemplateVersion),
    versions: Type.Array(PlatformEmailTemplateVersion, { description: 'Every version in this language, newest first.' }),
  },
  { additionalProperties: false, description: "A message's platform template in one language: its draft, published version and history." },
);

export const PlatformEmailTemplateDraft = Type.Omit(EmailTemplateDraft, orgOnly, {
  additionalProperties: false,
  description: 'The whole draft: a field left out is null (no platform wording for it).',
});

const { from_name: _f, reply_to: _r, text_part: _t, ...platformExample } = emailTemplateDraftExample;
export const platformEmailTemplateDraftExample = platformExample;

// Their names in the OpenAPI document's components/schemas.
nameSchemas({ PlatformEmailTemplateView, PlatformEmailTemplateVersion, PlatformEmailTemplateDraft });
