// Platform email templates: the deployment's own wording of each catalog message per language, which every
// organisation inherits where it has no override. They belong to no organisation; only platform
// administrators (`platform/email_templates_edit`) reach these functions. Spec operation 3 (restore a version
// as the draft) and the supporting read, write-the-draft and publish operations.
// The organisation passed in is the one whose address the change came through: its outbox carries the event.
import type { Static } from 'typebox';
import { type Clock, nowIso } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import type { EventRecorder } from '../../events/outbox.ts';
import { newId } from '../../ids.ts';
import { languageFromPath } from '../email-templates/language-tag.ts';
import { requireMessage, type MessageDefinition } from '../email-templates/message-catalog.ts';
import { messageView, templateEditing, versionsView } from '../email-templates/template-editing.ts';
import { insertOrConflict } from '../email-templates/version-lifecycle.ts';
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
  const { clock } = deps;
  const editing = templateEditing<'platform_email_template_versions', Located, (typeof contentFields)[number], VersionView>({
    deps,
    versions: platformEmailTemplateVersions,
    contentFields,
    eventPrefix: 'platform_email_template',
    async createTemplate(db, _organisationId, at) {
      const row = { id: newId(), message_key: at.message.message_key, language: at.language, created_at: nowIso(clock) };
      await insertOrConflict(() => platformEmailTemplatesRepository.insert(db, row));
      return row.id;
    },
    eventFields: (at) => ({ language: at.language }),
    describe: (at) => `Platform template ${JSON.stringify(at.message.title)} (${at.language})`,
    view: toPlatformVersionView,
  });

  /** The language tag first (422), then the message (404). */
  async function locate(db: Db, messageKey: string, languageParam: string): Promise<Located> {
    const language = languageFromPath(languageParam);
    const message = requireMessage(messageKey);
    return { message, language, template: await platformEmailTemplatesRepository.find(db, messageKey, language) };
  }

  return {
    async view(db: Db, messageKey: string, language: string): Promise<Static<typeof PlatformEmailTemplateView>> {
      const { message, language: tag, template } = await locate(db, messageKey, language);
      const versions = template ? (await platformEmailTemplateVersions.list(db, null, template.id)).map(toPlatformVersionView) : [];
      return { ...messageView(message), language: tag, ...versionsView(template, versions) };
    },

    async saveDraft(db: Db, organisationId: string, messageKey: string, language: string, input: Static<typeof PlatformEmailTemplateDraft>) {
      return editing.saveDraft(db, organisationId, null, await locate(db, messageKey, language), input);
    },

    async publish(db: Db, organisationId: string, messageKey: string, language: string): Promise<VersionView> {
      return editing.publish(db, organisationId, null, await locate(db, messageKey, language));
    },

    /** spec: operation 3 — copies an earlier version into the draft; it does not publish. */
    async restore(db: Db, organisationId: string, messageKey: string, language: string, versionId: string): Promise<VersionView> {
      return editing.restore(db, organisationId, null, await locate(db, messageKey, language), versionId);
    },
  };
}

export type PlatformEmailTemplateService = ReturnType<typeof createPlatformEmailTemplateService>;
