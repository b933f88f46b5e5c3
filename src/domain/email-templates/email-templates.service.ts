// Organisation email templates: an organisation overrides a catalog message's wording per scope (the whole
// organisation, a category, a course, an activity) and language. Spec operations 1 (read the draft, the
// published version and the history) and 2 (restore an earlier version as the draft), and the supporting
// write-the-draft and publish operations (docs/decisions.md#resources-the-specification-names-without-operations).
import type { Static } from 'typebox';
import type { Actor } from '../../access/actor.ts';
import { type Clock, nowIso } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import { ApiError } from '../../errors/api-error.ts';
import { newId } from '../../ids.ts';
import type { EventRecorder } from '../../events/outbox.ts';
import { messageView, templateEditing, versionsView } from './template-editing.ts';
import type { CatalogMessage, EmailTemplateDraft, EmailTemplateVersion, EmailTemplateView } from './email-templates.schemas.ts';
import { emailTemplatesRepository, emailTemplateVersions, type EmailTemplateRow } from './email-templates.repository.ts';
import { messageCatalog, requireMessage, type MessageDefinition } from './message-catalog.ts';
import { scopeFromQuery, scopeIsLive, type TemplateScope, type TemplateScopeQuery } from './template-scope.ts';
import { insertOrConflict } from './version-lifecycle.ts';
import type { VersionRow } from './versions.repository.ts';

type VersionView = Static<typeof EmailTemplateVersion>;
type VersionRowOf = VersionRow<'email_template_versions'>;

const contentFields = ['subject', 'preheader', 'from_name', 'reply_to', 'text_part', 'body'] as const;

export function toVersionView(row: VersionRowOf): VersionView {
  return {
    id: row.id,
    version: row.version,
    state: row.state,
    subject: row.subject,
    preheader: row.preheader,
    from_name: row.from_name,
    reply_to: row.reply_to,
    variable_refs: JSON.parse(row.variable_refs),
    text_part: row.text_part,
    body: row.body,
    created_at: row.created_at,
    published_at: row.published_at,
  };
}

const describeScope = (s: TemplateScope) => (s.level === 'tenant' ? `organisation-wide, ${s.language}` : `${s.level} ${s.scope_id}, ${s.language}`);

interface Located {
  message: MessageDefinition;
  scope: TemplateScope;
  live: boolean;
  template: EmailTemplateRow | undefined;
}

export function createEmailTemplateService(deps: { clock: Clock; events: EventRecorder }) {
  const { clock } = deps;
  const editing = templateEditing<'email_template_versions', Located, (typeof contentFields)[number], VersionView>({
    deps,
    versions: emailTemplateVersions,
    contentFields,
    eventPrefix: 'email_template',
    async createTemplate(db, organisationId, at) {
      const row = { id: newId(), organisation_id: organisationId, message_key: at.message.message_key, scope_level: at.scope.level, scope_id: at.scope.scope_id, language: at.scope.language, created_at: nowIso(clock) };
      await insertOrConflict(() => emailTemplatesRepository.insert(db, row));
      return row.id;
    },
    eventFields: (at) => ({ language: at.scope.language, level: at.scope.level, scope_id: at.scope.scope_id }),
    describe: (at) => `${JSON.stringify(at.message.title)} (${describeScope(at.scope)})`,
    view: toVersionView,
  });

  /** Parameters first (422), then what they name (404), as the spec lists them for operations 1 and 2. */
  async function locate(db: Db, organisationId: string, messageKey: string, query: TemplateScopeQuery): Promise<Located> {
    const scope = scopeFromQuery(query);
    const message = requireMessage(messageKey);
    const live = await scopeIsLive(db, organisationId, scope);
    return { message, scope, live, template: await emailTemplatesRepository.find(db, organisationId, messageKey, scope) };
  }

  /** Writes need a live scope: templates of a deleted category, course or activity stay readable but no longer change. */
  async function locateForWrite(db: Db, organisationId: string, messageKey: string, query: TemplateScopeQuery): Promise<Located> {
    const located = await locate(db, organisationId, messageKey, query);
    if (!located.live) throw new ApiError('email_template.scope_deleted', `The ${located.scope.level} ${located.scope.scope_id} was deleted; its templates can no longer change.`);
    return located;
  }

  return {
    catalog(): Static<typeof CatalogMessage>[] {
      return [...messageCatalog.values()].map(({ message_key, title, description, category, critical, variables }) => ({
        message_key,
        title,
        description,
        category,
        critical,
        variables: variables.map(({ name, description: d }) => ({ name, description: d })),
      }));
    },

    /** spec: operation 1. A message without an override here has no versions and inherits its wording. */
    async view(db: Db, organisationId: string, actor: Actor, messageKey: string, query: TemplateScopeQuery): Promise<Static<typeof EmailTemplateView>> {
      const { message, scope, live, template } = await locate(db, organisationId, messageKey, query);
      const versions = template ? (await emailTemplateVersions.list(db, organisationId, template.id)).map(toVersionView) : [];
      return { ...messageView(message), scope, ...versionsView(template, versions), may_edit_source: actor.capabilities.has('email_template/edit') && live };
    },

    async saveDraft(db: Db, organisationId: string, messageKey: string, query: TemplateScopeQuery, input: Static<typeof EmailTemplateDraft>) {
      return editing.saveDraft(db, organisationId, organisationId, await locateForWrite(db, organisationId, messageKey, query), input);
    },

    async publish(db: Db, organisationId: string, messageKey: string, query: TemplateScopeQuery): Promise<VersionView> {
      return editing.publish(db, organisationId, organisationId, await locateForWrite(db, organisationId, messageKey, query));
    },

    /** spec: operation 2 — copies an earlier version into the draft; it does not publish. */
    async restore(db: Db, organisationId: string, messageKey: string, versionId: string, query: TemplateScopeQuery): Promise<VersionView> {
      return editing.restore(db, organisationId, organisationId, await locateForWrite(db, organisationId, messageKey, query), versionId);
    },
  };
}

export type EmailTemplateService = ReturnType<typeof createEmailTemplateService>;
