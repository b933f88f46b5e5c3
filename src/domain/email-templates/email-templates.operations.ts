import Type from 'typebox';
import { defineOperation, Outcome } from '../../operations/operation.ts';
import {
  CatalogMessage,
  EmailTemplateDraft,
  emailTemplateDraftExample,
  EmailTemplateVersion,
  EmailTemplateView,
  MessageKeyParams,
  TemplateScopeQuery,
  VersionParams,
} from './email-templates.schemas.ts';
import { namedAfter } from '../../operations/schemas.ts';
import { templateWriteOperation, type TemplateLevelDeclarations } from './template-operations.ts';

const organisationLevel: TemplateLevelDeclarations = { tag: 'Email templates', capability: 'email_template/edit', version: EmailTemplateVersion };
const { tag } = organisationLevel;
const scopeRules =
  'Query: `language` (BCP 47, required), `level` (`tenant` by default, `category`, `course`, `activity`) and `scope_id` (required unless `level` is `tenant`, refused when it is). ' +
  'An unknown message, or a scope that is not in this organisation, is a 404.';

export const emailTemplateOperations = [
  defineOperation({
    id: 'listEmailTemplateMessages',
    method: 'GET',
    path: '/email_templates',
    tag,
    summary: 'List the message catalog',
    description: 'Every message the platform sends, with the variables its templates may use. The catalog is compiled in, so it is answered whole (no paging).',
    scope: 'email:read',
    capability: 'email_template/edit',
    writes: false,
    success: { status: 200, schema: namedAfter(CatalogMessage, 'List', Type.Object({ data: Type.Array(CatalogMessage) }, { additionalProperties: false })), description: 'The message catalog.' },
    errors: [],
    handler: async (ctx) => ({ data: ctx.services.emailTemplates.catalog() }),
  }),
  defineOperation({
    id: 'getEmailTemplateVersions',
    errorCodes: ['email_template.scope_not_found'],
    method: 'GET',
    path: '/email_templates/{message_key}/versions',
    tag,
    summary: "Read an email template's draft, published version and history",
    description: `The template of a message at one scope and language. A message with no override there has no versions (empty \`versions\`) and inherits its wording. ${scopeRules}`,
    scope: 'email:read',
    capability: 'email_template/edit',
    writes: false,
    params: MessageKeyParams,
    query: TemplateScopeQuery,
    notFoundCode: 'email_template.message_not_found',
    success: { status: 200, schema: EmailTemplateView, description: 'The email template view.' },
    errors: [404, 422],
    handler: (ctx, { params, query }) => ctx.services.emailTemplates.view(ctx.db, ctx.organisation.id, ctx.actor, params.message_key, query),
  }),
  templateWriteOperation(organisationLevel, {
    id: 'saveEmailTemplateDraft',
    errorCodes: ['email_template.scope_not_found', 'email_template.scope_deleted', 'email_template.concurrent_change'],
    emits: ['email_template.draft_saved'],
    method: 'PUT',
    path: '/email_templates/{message_key}/draft',
    summary: "Write an email template's draft",
    description:
      'Creates the draft version (201; and the override itself on its first draft) or replaces its content (200). The body is the whole draft: a field left out is null, which inherits. ' +
      `Nothing is in use until the draft is published. A deleted category, course or activity: 409. ${scopeRules}`,
    idempotency: 'optional',
    params: MessageKeyParams,
    query: TemplateScopeQuery,
    body: EmailTemplateDraft,
    bodyExample: emailTemplateDraftExample,
    success: { status: 201, alsoStatuses: [200], description: 'The draft version: created (201) or replaced (200).' },
    async handler(ctx, { params, query, body }) {
      const { created, version } = await ctx.services.emailTemplates.saveDraft(ctx.db, ctx.organisation.id, params.message_key, query, body);
      return new Outcome(created ? 201 : 200, version);
    },
  }),
  templateWriteOperation(organisationLevel, {
    id: 'publishEmailTemplateDraft',
    errorCodes: ['email_template.scope_not_found', 'email_template.no_draft', 'email_template.scope_deleted', 'email_template.concurrent_change'],
    emits: ['email_template.published'],
    method: 'POST',
    path: '/email_templates/{message_key}/draft/actions/publish',
    summary: "Publish an email template's draft",
    description: `The draft becomes the published version, in use from now on; the version published before becomes \`archived\`. No draft: 409 \`email_template.no_draft\`. ${scopeRules}`,
    idempotency: 'optional',
    params: MessageKeyParams,
    query: TemplateScopeQuery,
    success: { status: 200, description: 'The version now published.' },
    handler: (ctx, { params, query }) => ctx.services.emailTemplates.publish(ctx.db, ctx.organisation.id, params.message_key, query),
  }),
  templateWriteOperation(organisationLevel, {
    id: 'restoreEmailTemplateVersion',
    errorCodes: ['email_template.message_not_found', 'email_template.scope_not_found', 'email_template.version_is_draft', 'email_template.scope_deleted', 'email_template.concurrent_change'],
    emits: ['email_template.draft_restored'],
    method: 'POST',
    path: '/email_templates/{message_key}/versions/{version_id}/actions/restore',
    summary: 'Restore an email template version as the draft',
    description:
      'Copies an earlier (published or archived) version into the draft, creating the draft if there is none. It does not publish: the restored content is not in use until the draft is published. ' +
      `A version that is not of this template at this scope and language: 404. Restoring the draft itself, or a deleted category, course or activity: 409. ${scopeRules}`,
    idempotency: 'required',
    params: VersionParams,
    query: TemplateScopeQuery,
    notFoundCode: 'email_template.version_not_found',
    success: { status: 200, description: 'The draft version, holding the restored content.' },
    handler: (ctx, { params, query }) => ctx.services.emailTemplates.restore(ctx.db, ctx.organisation.id, params.message_key, params.version_id, query),
  }),
];
