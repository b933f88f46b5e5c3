import Type from 'typebox';
import type { TemplateScopeLevel } from '../../db/tables.ts';
import { nameSchemas, Nullable, Timestamp, Uuid } from '../../operations/schemas.ts';
import { LanguageTag } from './language-tag.ts';
import { messageCategories, type MessageCategory } from './message-catalog.ts';

export const scopeLevels: readonly TemplateScopeLevel[] = ['tenant', 'category', 'course', 'activity'];
const ScopeLevel = (options: { default?: string; description?: string } = {}) => Type.Unsafe<TemplateScopeLevel>({ type: 'string', enum: [...scopeLevels], ...options });

// Any string: an unknown key is a 404 from the service (the catalog decides), the same for every method.
export const MessageKey = Type.String({ description: 'A `message_key` of the message catalog (`GET /email_templates`), e.g. `enrolment_welcome`.' });

export const MessageKeyParams = Type.Object({ message_key: MessageKey }, { additionalProperties: false });
export const VersionParams = Type.Object({ message_key: MessageKey, version_id: Uuid() }, { additionalProperties: false });

// spec: operation 1 — Query. The conditional rule on scope_id is the service's (a schema would name it poorly).
export const TemplateScopeQuery = Type.Object(
  {
    language: LanguageTag,
    level: Type.Optional(ScopeLevel({ default: 'tenant', description: 'The scope level; default `tenant` (the whole organisation).' })),
    scope_id: Type.Optional(Uuid({ description: 'The category, course or activity; required unless `level` is `tenant`, refused when it is.' })),
  },
  { additionalProperties: false },
);

const VersionState = Type.Union([Type.Literal('draft'), Type.Literal('published'), Type.Literal('archived')]);

const versionFields = {
  id: Uuid(),
  version: Type.Integer({ minimum: 1, description: 'Numbered from 1 per template; the draft has the highest number.' }),
  state: VersionState,
  subject: Nullable(Type.String()),
  preheader: Nullable(Type.String()),
  from_name: Nullable(Type.String()),
  reply_to: Nullable(Type.String()),
  variable_refs: Type.Array(Type.String()),
  text_part: Nullable(Type.String()),
  body: Nullable(Type.String({ description: 'Block document or MJML source as JSON text; null means inherit.' })),
  created_at: Timestamp(),
  published_at: Nullable(Timestamp('When this version was published (kept once archived); null for a draft never published.')),
};

export const EmailTemplateVersion = Type.Object(versionFields, {
  additionalProperties: false,
  description: 'A version of an organisation email template. A null field inherits the wording of the next scope up.',
});

export const EmailTemplateView = Type.Object(
  {
    message_key: Type.String(),
    title: Type.String(),
    description: Type.String(),
    category: Type.String(),
    critical: Type.Boolean(),
    scope: Type.Object(
      { level: ScopeLevel(), scope_id: Nullable(Uuid()), language: Type.String({ description: 'The language tag, in conventional case.' }) },
      { additionalProperties: false },
    ),
    template_id: Nullable(Uuid({ description: 'Null when this scope and language have no override: the message inherits its wording.' })),
    draft: Nullable(EmailTemplateVersion),
    published: Nullable(EmailTemplateVersion),
    versions: Type.Array(EmailTemplateVersion, { description: 'Every version at this scope and language, newest first.' }),
    may_edit_source: Type.Boolean({
      description: 'Whether the caller may change this template here (write the draft, publish, restore): holds `email_template/edit` and the scope is not deleted.',
    }),
  },
  { additionalProperties: false, description: "A message's template at one scope and language: its draft, published version and history." },
);

// Bounds the spec leaves open, chosen for what mail clients show and what SMTP carries.
const MAX_SUBJECT = 255;
const MAX_TEXT = 100_000;
const MAX_BODY = 500_000;
const MAX_VARIABLES = 50;

export const draftFields = {
  subject: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: MAX_SUBJECT, description: `1 to ${MAX_SUBJECT} characters; null inherits.` }))),
  preheader: Type.Optional(Nullable(Type.String({ maxLength: MAX_SUBJECT, description: `At most ${MAX_SUBJECT} characters; null inherits.` }))),
  from_name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: MAX_SUBJECT, description: `1 to ${MAX_SUBJECT} characters; null inherits.` }))),
  reply_to: Type.Optional(Nullable(Type.String({ format: 'email', maxLength: 254, description: 'An e-mail address; null inherits.' }))),
  variable_refs: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
      maxItems: MAX_VARIABLES,
      uniqueItems: true,
      description: 'The variables the content uses; each must be one the message offers (see the catalog). Default: none.',
    }),
  ),
  text_part: Type.Optional(Nullable(Type.String({ maxLength: MAX_TEXT, description: 'The plain-text part; null inherits.' }))),
  body: Type.Optional(Nullable(Type.String({ maxLength: MAX_BODY, description: 'Block document or MJML source as JSON text (must parse as JSON); null inherits.' }))),
};

export const EmailTemplateDraft = Type.Object(draftFields, {
  additionalProperties: false,
  description: 'The whole draft: a field left out is null, which inherits the wording of the next scope up.',
});

export const emailTemplateDraftExample = {
  subject: 'Welcome to {{course.fullname}}',
  preheader: 'Everything you need for your first week',
  from_name: 'Your course team',
  reply_to: 'courses@school.example',
  variable_refs: ['user.firstname', 'course.fullname', 'course.url'],
  text_part: 'Hello {{user.firstname}}, welcome to {{course.fullname}}: {{course.url}}',
  body: JSON.stringify({ type: 'blocks', blocks: [{ type: 'paragraph', text: 'Hello {{user.firstname}}, welcome to {{course.fullname}}.' }, { type: 'button', text: 'Open the course', href: '{{course.url}}' }] }),
};

export const CatalogMessage = Type.Object(
  {
    message_key: Type.String(),
    title: Type.String(),
    description: Type.String(),
    category: Type.Unsafe<MessageCategory>({ type: 'string', enum: [...messageCategories] }),
    critical: Type.Boolean({ description: 'Sent whatever the recipient’s notification preferences (account security).' }),
    variables: Type.Array(Type.Object({ name: Type.String(), description: Type.String() }, { additionalProperties: false }), {
      description: 'The variables a template of this message may use (`variable_refs`).',
    }),
  },
  { additionalProperties: false, description: 'A message the platform sends, whose wording templates override.' },
);

// Their names in the OpenAPI document's components/schemas.
nameSchemas({ EmailTemplateView, EmailTemplateVersion, EmailTemplateDraft, CatalogMessage });
