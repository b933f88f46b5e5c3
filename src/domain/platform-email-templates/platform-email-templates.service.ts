// Platform email templates: the deployment's own wording of each catalog message per language, which every
// organisation inherits where it has no override. They belong to no organisation; only platform
// administrators (`platform/email_templates_edit`) reach these functions. Spec operation 3 (restore a version
// as the draft) and the supporting read, write-the-draft and publish operations.
// The organisation passed in is the one whose address the change came through: its outbox carries the event.
import type { Static } from 'typebox';
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import type { EventType } from '../../events/catalog.ts';
import type { EventRecorder } from '../../events/outbox.ts';
import { newId } from '../../ids.ts';
import { checkDraftContent, draftColumns } from '../email-templates/draft-content.ts';
import { languageFromPath } from '../email-templates/language-tag.ts';
import { requireMessage, type MessageDefinition } from '../email-templates/message-catalog.ts';
import { insertOrConflict, versionLifecycle } from '../email-templates/version-lifecycle.ts';
import type { VersionRow } from '../email-templates/versions.repository.ts';
import type { PlatformEmailTemplateDraft, PlatformEmailTemplateVersion, PlatformEmailTemplateView } from './platform-email-templates.schemas.ts';
import { platformEmailTemplatesRepository, platformEmailTemplateVersions, type PlatformEmailTemplateRow } from './platform-email-templates.repository.ts';

type VersionView = Static<typeof PlatformEmailTemplateVersion>;
type VersionRowOf = VersionRow<'platform_email_template_versions'>;

const contentFields = ['subject', 'preheader', 'body'] as const;

export function toPlatformVersionView(row: VersionRowOf): VersionView {
  return {
    id: row.id,
    version: row.version,
    state: row.state,
    subject: row.subject,
    preheader: row.preheader,
    variable_refs: JSON.parse(row.variable_refs),
    body: row.body,
    created_at: row.created_at,
    published_at: row.published_at,
  };
}

interface Located {
  message: MessageDefinition;
  language: string;
  template: PlatformEmailTemplateRow | undefined;
}

export function createPlatformEmailTemplateService(deps: { clock: Clock; events: EventRecorder }) {
  const { clock, events } = deps;
  const lifecycle = versionLifecycle<'platform_email_template_versions'>(deps, platformEmailTemplateVersions, [...contentFields, 'variable_refs']);

  /** The language tag first (422), then the message (404). */
  async function locate(db: Db, messageKey: string, languageParam: string): Promise<Located> {
    const language = languageFromPath(languageParam);
    const message = requireMessage(messageKey);
    return { message, language, template: await platformEmailTemplatesRepository.find(db, messageKey, language) };
  }

  async function record(db: Db, organisationId: string, type: EventType, at: Located, version: VersionRowOf, summary: string, extra: Record<string, string> = {}) {
    await events.record(db, organisationId, type, {
      id: version.template_id,
      message_key: at.message.message_key,
      language: at.language,
      version_id: version.id,
      ...extra,
      summary: `Platform template ${JSON.stringify(at.message.title)} (${at.language}): ${summary}`,
    });
  }

  return {
    async view(db: Db, messageKey: string, language: string): Promise<Static<typeof PlatformEmailTemplateView>> {
      const { message, language: tag, template } = await locate(db, messageKey, language);
      const versions = template ? (await platformEmailTemplateVersions.list(db, null, template.id)).map(toPlatformVersionView) : [];
      return {
        message_key: message.message_key,
        title: message.title,
        description: message.description,
        category: message.category,
        critical: message.critical,
        language: tag,
        template_id: template?.id ?? null,
        draft: versions.find((v) => v.state === 'draft') ?? null,
        published: versions.find((v) => v.state === 'published') ?? null,
        versions,
      };
    },

    async saveDraft(db: Db, organisationId: string, messageKey: string, language: string, input: Static<typeof PlatformEmailTemplateDraft>) {
      const located = await locate(db, messageKey, language);
      checkDraftContent(located.message, input);
      let template = located.template;
      if (!template) {
        template = { id: newId(), message_key: messageKey, language: located.language, created_at: clock.now().toISOString() };
        const row = template;
        await insertOrConflict(() => platformEmailTemplatesRepository.insert(db, row));
      }
      const { row, created } = await lifecycle.saveDraft(db, null, template.id, draftColumns(input, contentFields));
      await record(db, organisationId, 'platform_email_template.draft_saved', located, row, `draft saved as version ${row.version}.`);
      return { created, version: toPlatformVersionView(row) };
    },

    async publish(db: Db, organisationId: string, messageKey: string, language: string): Promise<VersionView> {
      const located = await locate(db, messageKey, language);
      const row = await lifecycle.publish(db, null, located.template?.id);
      await record(db, organisationId, 'platform_email_template.published', located, row, `version ${row.version} published.`);
      return toPlatformVersionView(row);
    },

    /** spec: operation 3 — copies an earlier version into the draft; it does not publish. */
    async restore(db: Db, organisationId: string, messageKey: string, language: string, versionId: string): Promise<VersionView> {
      const located = await locate(db, messageKey, language);
      const { row, restored } = await lifecycle.restore(db, null, located.template?.id, versionId);
      await record(db, organisationId, 'platform_email_template.draft_restored', located, row, `version ${restored.version} restored as the draft (version ${row.version}).`, {
        restored_version_id: restored.id,
      });
      return toPlatformVersionView(row);
    },
  };
}

export type PlatformEmailTemplateService = ReturnType<typeof createPlatformEmailTemplateService>;
