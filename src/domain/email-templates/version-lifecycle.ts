// The life of a template's versions, the same at the organisation and the platform level:
//   write the draft → a draft version (created, or its content replaced: at most one draft per template);
//   publish        → the draft becomes `published`, the previous published version `archived`;
//   restore        → an earlier version's content is copied into the draft, which is NOT published
//                    (spec: States — "the restored content is not in use until the draft is published").
// Versions are numbered per template from 1; the draft always carries the highest number.
import { type Clock, nowIso } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import type { Tables } from '../../db/tables.ts';
import { ApiError } from '../../errors/api-error.ts';
import { newId } from '../../ids.ts';
import type { OwnerOf, VersionRow, VersionRows, VersionTable } from './versions.repository.ts';

// spec: Errors 5 — 409 for a concurrent write. The unique indexes (one draft, one published, one number per
// template) turn a lost race into this instead of a second draft.
const concurrentChange = () => new ApiError('email_template.concurrent_change', 'The template changed while this request ran; read it again and retry.');

/** Runs an insert that a concurrent writer may have beaten to the same unique key: that is a 409, not a 500. */
export async function insertOrConflict(insert: () => Promise<void>): Promise<void> {
  try {
    await insert();
  } catch (err) {
    if (isUniqueViolation(err)) throw concurrentChange();
    throw err;
  }
}

export function versionLifecycle<T extends VersionTable>(deps: { clock: Clock }, rows: VersionRows<T>, contentColumns: readonly (keyof VersionRow<T>)[]) {
  type Row = VersionRow<T>;

  const contentOf = (row: Row): Partial<Row> => Object.fromEntries(contentColumns.map((c) => [c, row[c]])) as Partial<Row>;

  async function saveDraft(db: Db, owner: OwnerOf<T>, templateId: string, content: Partial<Row>): Promise<{ row: Row; created: boolean }> {
    const at = nowIso(deps.clock);
    const draft = await rows.findInState(db, owner, templateId, 'draft');
    if (draft) {
      const replaced = await rows.replaceDraft(db, owner, draft.id, content, at);
      if (!replaced) throw concurrentChange();
      return { row: replaced, created: false };
    }
    const row = {
      id: newId(),
      ...(owner === null ? {} : { organisation_id: owner }),
      template_id: templateId,
      version: (await rows.lastVersion(db, owner, templateId)) + 1,
      state: 'draft',
      ...content,
      created_at: at,
      updated_at: at,
      published_at: null,
    } as unknown as Tables[T];
    await insertOrConflict(() => rows.insert(db, row));
    return { row: row as unknown as Row, created: true };
  }

  return {
    saveDraft,

    async publish(db: Db, owner: OwnerOf<T>, templateId: string | undefined): Promise<Row> {
      const draft = templateId === undefined ? undefined : await rows.findInState(db, owner, templateId, 'draft');
      if (templateId === undefined || !draft) throw new ApiError('email_template.no_draft', 'There is no draft to publish; write one first (PUT …/draft) or restore an earlier version.');
      const at = nowIso(deps.clock);
      await rows.archivePublished(db, owner, templateId, at);
      const published = await rows.publishDraft(db, owner, draft.id, at);
      if (!published) throw concurrentChange();
      return published;
    },

    /** Copies `versionId`'s content into the draft; `restored` is the version copied from. */
    async restore(db: Db, owner: OwnerOf<T>, templateId: string | undefined, versionId: string) {
      const restored = templateId === undefined ? undefined : await rows.findById(db, owner, templateId, versionId);
      if (templateId === undefined || !restored) {
        throw new ApiError('email_template.version_not_found', `No version ${versionId} of this message's template at this scope and language.`);
      }
      if (restored.state === 'draft') {
        throw new ApiError('email_template.version_is_draft', `Version ${restored.version} is the draft itself; restore an earlier (published or archived) version.`);
      }
      return { restored, ...(await saveDraft(db, owner, templateId, contentOf(restored))) };
    },
  };
}
