// Writing a template's draft, publishing it and restoring an earlier version: the same three steps at the
// organisation and the platform level, each recording its event in the change's transaction. A level says how
// its templates are found and created, what its events carry beyond the version, and how a version is shown.
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import type { EventType } from '../../events/catalog.ts';
import type { EventRecorder } from '../../events/outbox.ts';
import { checkDraftContent, draftColumns, type DraftInput } from './draft-content.ts';
import type { MessageDefinition } from './message-catalog.ts';
import { versionLifecycle } from './version-lifecycle.ts';
import type { OwnerOf, VersionRow, VersionRows, VersionTable } from './versions.repository.ts';

/** A template as a request names it: its catalog message and, once a first draft made it, its row. */
export interface LocatedTemplate {
  message: MessageDefinition;
  template: { id: string } | undefined;
}

export interface TemplateLevel<T extends VersionTable, L extends LocatedTemplate, K extends string, V> {
  deps: { clock: Clock; events: EventRecorder };
  versions: VersionRows<T>;
  /** The columns a draft writes besides `variable_refs`. */
  contentFields: readonly (K & keyof VersionRow<T>)[];
  /** Names the level's events: `<prefix>.draft_saved`, `<prefix>.published`, `<prefix>.draft_restored`. */
  eventPrefix: 'email_template' | 'platform_email_template';
  /** Creates the template a first draft needs; its id. */
  createTemplate(db: Db, organisationId: string, at: L): Promise<string>;
  /** What an event says of where the template is (language, and scope where there is one), after its id and message key. */
  eventFields(at: L): Record<string, string | null>;
  /** How an event's summary names the template. */
  describe(at: L): string;
  view(row: VersionRow<T>): V;
}

export function templateEditing<T extends VersionTable, L extends LocatedTemplate, K extends string, V>(level: TemplateLevel<T, L, K, V>) {
  const lifecycle = versionLifecycle<T>(level.deps, level.versions, [...level.contentFields, 'variable_refs']);
  const eventType = (what: 'draft_saved' | 'published' | 'draft_restored') => `${level.eventPrefix}.${what}` as EventType;

  async function record(db: Db, organisationId: string, type: EventType, at: L, version: VersionRow<T>, summary: string, extra: Record<string, string> = {}) {
    await level.deps.events.record(db, organisationId, type, {
      id: version.template_id,
      message_key: at.message.message_key,
      ...level.eventFields(at),
      version_id: version.id,
      ...extra,
      summary: `${level.describe(at)}: ${summary}`,
    });
  }

  return {
    /** Writes the whole draft (a field left out is null: inherit); creates the template on its first draft. */
    async saveDraft(db: Db, organisationId: string, owner: OwnerOf<T>, at: L, input: DraftInput & Partial<Record<K, string | null>> & { variable_refs?: string[] }) {
      checkDraftContent(at.message, input);
      const templateId = at.template?.id ?? (await level.createTemplate(db, organisationId, at));
      const { row, created } = await lifecycle.saveDraft(db, owner, templateId, draftColumns(input, level.contentFields) as Partial<VersionRow<T>>);
      await record(db, organisationId, eventType('draft_saved'), at, row, `draft saved as version ${row.version}.`);
      return { created, version: level.view(row) };
    },

    /** The draft becomes the published version; the one published before is archived. */
    async publish(db: Db, organisationId: string, owner: OwnerOf<T>, at: L): Promise<V> {
      const row = await lifecycle.publish(db, owner, at.template?.id);
      await record(db, organisationId, eventType('published'), at, row, `version ${row.version} published.`);
      return level.view(row);
    },

    /** Copies an earlier version into the draft; it does not publish. */
    async restore(db: Db, organisationId: string, owner: OwnerOf<T>, at: L, versionId: string): Promise<V> {
      const { row, restored } = await lifecycle.restore(db, owner, at.template?.id, versionId);
      await record(db, organisationId, eventType('draft_restored'), at, row, `version ${restored.version} restored as the draft (version ${row.version}).`, {
        restored_version_id: restored.id,
      });
      return level.view(row);
    },
  };
}

/** What a template's view says of its catalog message. */
export function messageView(message: MessageDefinition) {
  return { message_key: message.message_key, title: message.title, description: message.description, category: message.category, critical: message.critical };
}

/** What a template's view says of its versions: none before its first draft. */
export function versionsView<V extends { state: string }>(template: { id: string } | undefined, versions: V[]) {
  return { template_id: template?.id ?? null, draft: versions.find((v) => v.state === 'draft') ?? null, published: versions.find((v) => v.state === 'published') ?? null, versions };
}
