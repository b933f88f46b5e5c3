// Platform templates are the deployment's, reached through any organisation address; only a platform
// administrator (`platform/email_templates_edit`) may read or change them. They have no organisation, so
// "another organisation's resource" does not apply: every organisation address reaches the same templates.
import { defineOperation, Outcome } from '../../operations/operation.ts';
import {
  PlatformEmailTemplateDraft,
  platformEmailTemplateDraftExample,
  PlatformEmailTemplateVersion,
  PlatformEmailTemplateView,
  PlatformTemplateParams,
  PlatformVersionParams,
} from './platform-email-templates.schemas.ts';
import { templateWriteOperation, type TemplateLevelDeclarations } from '../email-templates/template-operations.ts';

const platformLevel: TemplateLevelDeclarations = { tag: 'Platform email templates', capability: 'platform/email_templates_edit', version: PlatformEmailTemplateVersion };
const { tag } = platformLevel;
const rules = 'A malformed `language` is a 422 naming it; an unknown message is a 404.';

export const platformEmailTemplateOperations = [
  defineOperation({
    id: 'getPlatformEmailTemplateVersions',
    errorCodes: ['validation.invalid_parameter'],
    method: 'GET',
    path: '/platform/email_templates/{message_key}/languages/{language}/versions',
    tag,
    summary: "Read a platform email template's draft, published version and history",
    description: `The deployment's template of a message in one language. No template yet: no versions. ${rules}`,
    scope: 'email:read',
    capability: 'platform/email_templates_edit',
    writes: false,
    params: PlatformTemplateParams,
    notFoundCode: 'email_template.message_not_found',
    success: { status: 200, schema: PlatformEmailTemplateView, description: 'The platform email template view.' },
    errors: [404, 422],
    handler: (ctx, { params }) => ctx.services.platformEmailTemplates.view(ctx.db, params.message_key, params.language),
  }),
  templateWriteOperation(platformLevel, {
    id: 'savePlatformEmailTemplateDraft',
    errorCodes: ['validation.invalid_parameter', 'email_template.concurrent_change'],
    emits: ['platform_email_template.draft_saved'],
    method: 'PUT',
    path: '/platform/email_templates/{message_key}/languages/{language}/draft',
    summary: "Write a platform email template's draft",
    description: `Creates the draft version (201; and the template itself on its first draft) or replaces its content (200). The body is the whole draft: a field left out is null. ${rules}`,
    idempotency: 'optional',
    params: PlatformTemplateParams,
    body: PlatformEmailTemplateDraft,
    bodyExample: platformEmailTemplateDraftExample,
    success: { status: 201, alsoStatuses: [200], description: 'The draft version: created (201) or replaced (200).' },
    async handler(ctx, { params, body }) {
      const { created, version } = await ctx.services.platformEmailTemplates.saveDraft(ctx.db, ctx.organisation.id, params.message_key, params.language, body);
      return new Outcome(created ? 201 : 200, version);
    },
  }),
  templateWriteOperation(platformLevel, {
    id: 'publishPlatformEmailTemplateDraft',
    errorCodes: ['validation.invalid_parameter', 'email_template.no_draft', 'email_template.concurrent_change'],
    emits: ['platform_email_template.published'],
    method: 'POST',
    path: '/platform/email_templates/{message_key}/languages/{language}/draft/actions/publish',
    summary: "Publish a platform email template's draft",
    description: `The draft becomes the published version; the version published before becomes \`archived\`. No draft: 409 \`email_template.no_draft\`. ${rules}`,
    idempotency: 'optional',
    params: PlatformTemplateParams,
    success: { status: 200, description: 'The version now published.' },
    handler: (ctx, { params }) => ctx.services.platformEmailTemplates.publish(ctx.db, ctx.organisation.id, params.message_key, params.language),
  }),
  templateWriteOperation(platformLevel, {
    id: 'restorePlatformEmailTemplateVersion',
    errorCodes: ['validation.invalid_parameter', 'email_template.message_not_found', 'email_template.version_is_draft', 'email_template.concurrent_change'],
    emits: ['platform_email_template.draft_restored'],
    method: 'POST',
    path: '/platform/email_templates/{message_key}/languages/{language}/versions/{version_id}/actions/restore',
    summary: 'Restore a platform email template version as a draft',
    description:
      'Copies an earlier (published or archived) version into the draft, creating the draft if there is none. It does not publish. ' +
      `A version that is not of this template in this language: 404. Restoring the draft itself: 409. ${rules}`,
    idempotency: 'required',
    params: PlatformVersionParams,
    notFoundCode: 'email_template.version_not_found',
    success: { status: 200, description: 'The draft version, holding the restored content.' },
    handler: (ctx, { params }) =>
      ctx.services.platformEmailTemplates.restore(ctx.db, ctx.organisation.id, params.message_key, params.language, params.version_id),
  }),
];
