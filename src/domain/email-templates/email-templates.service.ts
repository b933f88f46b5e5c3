// Organisation email templates: an organisation overrides a catalog message's wording per scope (the whole
// organisation, a category, a course, an activity) and language. Spec operations 1 (read the draft, the
// published version and the history) and 2 (restore an earlier version as the draft), and the supporting
// write-the-draft and publish operations (CONTRACT: Resources the spec names but does not list operations for).
import type { Static } from 'typebox';
import type { Actor } from '../../access/actor.ts';
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import { ApiError } from '../../errors/api-error.ts';
import { newId } from '../../ids.ts';
import type { EventRecorder } from '../../events/outbox.ts';
import type { EventType } from '../../events/catalog.ts';
import { checkDraftContent, draftColumns } from './draft-content.ts';
import type { CatalogMessage, EmailTemplateDraft, EmailTemplateVersion, EmailTemplateView } from './email-templates.schemas.ts';
import { emailTemplatesRepository, emailTemplateVersions, type EmailTemplateRow } from './email-templates.repository.ts';
import { messageCatalog, requireMessage, type MessageDefinition } from './message-catalog.ts';
import { scopeFromQuery, scopeIsLive, type TemplateScope, type TemplateScopeQuery } from './template-scope.ts';
import { insertOrConflict, versionLifecycle } from './version-lifecycle.ts';
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
  const { clock, events } = deps;
  const lifecycle = versionLifecycle<'email_template_versions'>(deps, emailTemplateVersions, [...contentFields, 'variable_refs']);

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

  async function record(db: Db, organisationId: string, type: EventType, at: Located, version: VersionRowOf, summary: string, extra: Record<string, string> = {}) {
    await events.record(db, organisationId, type, {
      id: version.template_id,
      message_key: at.message.message_key,
      language: at.scope.language,
      level: at.scope.level,
      scope_id: at.scope.scope_id,
      version_id: version.id,
      ...extra,
      summary: `${JSON.stringify(at.message.title)} (${describeScope(at.scope)}): ${summary}`,
    });
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
      return {
        message_key: message.message_key,
        title: message.title,
        description: message.description,
        category: message.category,
        critical: message.critical,
        scope,
        template_id: template?.id ?? null,
        draft: versions.find((v) => v.state === 'draft') ?? null,
        published: versions.find((v) => v.state === 'published') ?? null,
        versions,
        may_edit_source: actor.capabilities.has('email_template/edit') && live,
      };
    },

    /** Writes the whole draft (a field left out is null: inherit); creates the template on its first draft. */
    async saveDraft(db: Db, organisationId: string, messageKey: string, query: TemplateScopeQuery, input: Static<typeof EmailTemplateDraft>) {
      const located = await locateForWrite(db, organisationId, messageKey, query);
      checkDraftContent(located.message, input);
      let template = located.template;
      if (!template) {
        template = { id: newId(), organisation_id: organisationId, message_key: messageKey, scope_level: located.scope.level, scope_id: located.scope.scope_id, language: located.scope.language, created_at: clock.now().toISOString() };
        const row = template;
        await insertOrConflict(() => emailTemplatesRepository.insert(db, row));
      }
      const { row, created } = await lifecycle.saveDraft(db, organisationId, template.id, draftColumns(input, contentFields));
      await record(db, organisationId, 'email_template.draft_saved', located, row, `draft saved as version ${row.version}.`);
      return { created, version: toVersionView(row) };
    },

    /** The draft becomes the published version; the one published before is archived. */
    async publish(db: Db, organisationId: string, messageKey: string, query: TemplateScopeQuery): Promise<VersionView> {
      const located = await locateForWrite(db, organisationId, messageKey, query);
      const row = await lifecycle.publish(db, organisationId, located.template?.id);
      await record(db, organisationId, 'email_template.published', located, row, `version ${row.version} published.`);
      return toVersionView(row);
    },

    /** spec: operation 2 — copies an earlier version into the draft; it does not publish. */
    async restore(db: Db, organisationId: string, messageKey: string, versionId: string, query: TemplateScopeQuery): Promise<VersionView> {
      const located = await locateForWrite(db, organisationId, messageKey, query);
      const { row, restored } = await lifecycle.restore(db, organisationId, located.template?.id, versionId);
      await record(db, organisationId, 'email_template.draft_restored', located, row, `version ${restored.version} restored as the draft (version ${row.version}).`, {
        restored_version_id: restored.id,
      });
      return toVersionView(row);
    },
  };
}

export type EmailTemplateService = ReturnType<typeof createEmailTemplateService>;
