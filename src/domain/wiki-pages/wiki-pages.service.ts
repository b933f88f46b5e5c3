// Wiki pages and their history. Every change of title or body makes a new version; restoring version N
// (spec operation 4) makes a new version whose title and body are N's. Versions are never changed.
import type { Static } from 'typebox';
import { type Clock, nowIso } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import { insertWithExternalId } from '../external-ids.ts';
import { foundOr404, newResourceRow } from '../resource-rows.ts';
import type { EventRecorder } from '../../events/outbox.ts';
import type { EventType } from '../../events/catalog.ts';
import { ApiError, fieldError } from '../../errors/api-error.ts';
import type { CursorCodec } from '../../operations/pagination.ts';
import { newId } from '../../ids.ts';
import { activityDeleted, refuseUnlessActivityOfType } from '../activities/activities.service.ts';
import { softDelete } from '../deletions/soft-delete.ts';
import { finalStatementOffered } from '../../db/final-statement.ts';
import { quotedForSummary } from '../../events/summary-text.ts';
import { listPage, resourceList, type ListParams } from '../../operations/listing.ts';
import type { CreateWikiPage, UpdateWikiPage, UpsertWikiPage, WikiPage, WikiPageVersion } from './wiki-pages.schemas.ts';
import { isTitleClash, wikiPagesRepository, type PageContent, type WikiPageRow, type WikiPageVersionRow } from './wiki-pages.repository.ts';
import { isPostgres } from '../../db/column-types.ts';
import { isPremiseFailure } from '../../db/riders.ts';
import { ownerKeyOf, subwikiIdOf, wikisRepository, type SubwikiOwner, type WikiRow } from './wikis.repository.ts';

type WikiPageView = Static<typeof WikiPage>;
type WikiPageVersionView = Static<typeof WikiPageVersion>;

export const toWikiPageView = (r: WikiPageRow): WikiPageView => ({
  id: r.id,
  external_id: r.external_id,
  activity_id: r.activity_id,
  course_id: r.course_id,
  wiki_id: r.wiki_id,
  subwiki_id: r.subwiki_id,
  subwiki_user_id: r.subwiki_user_id,
  subwiki_group_id: r.subwiki_group_id,
  title: r.title,
  body: JSON.parse(r.body),
  version: r.version,
  updated_by: r.updated_by,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

export const toWikiPageVersionView = (r: WikiPageVersionRow): WikiPageVersionView => ({
  id: r.id,
  wiki_page_id: r.wiki_page_id,
  version: r.version,
  title: r.title,
  body: JSON.parse(r.body),
  restored_from: r.restored_from,
  created_by: r.created_by,
  created_at: r.created_at,
});

// Quoted as the statements that make an event in SQL quote it (one-statement PATCH and DELETE).

const titleTaken = (title: string) => new ApiError('wiki_page.title_taken', `Another live page of this subwiki is titled ${quotedForSummary(title)}.`);

/** Runs a write that sets a page's title; losing a race for the title (the unique index) is the same 409 as the check before it. */
async function guardingTitle<T>(title: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isTitleClash(err)) throw titleTaken(title);
    throw err;
  }
}

const WIKI_MODES: readonly WikiRow['mode'][] = ['collaborative', 'individual', 'group'];

/**
 * Which subwiki a new page goes into, by the wiki's mode; a field the mode has no use for is refused, and so is a
 * person (the one asked, or the caller) who is not a live person of the organisation (`personLive`, read with the
 * page's other facts). The refusal is answered, not thrown: the one-statement create asks which modes a request's
 * fields fit before it knows its wiki's.
 */
function subwikiOwner(mode: WikiRow['mode'], input: { subwiki_user_id?: string | null; subwiki_group_id?: string | null }, actorId: string, personLive: boolean): SubwikiOwner | ApiError {
  const user = input.subwiki_user_id ?? null;
  const group = input.subwiki_group_id ?? null;
  const unused = (field: string) => fieldError(`/${field}`, 'not_applicable', `A ${mode} wiki takes no \`${field}\`.`);
  const owner = (userId: string | null, groupId: string | null): SubwikiOwner => ({ key: ownerKeyOf(mode, { userId: userId ?? actorId, groupId }), userId, groupId });
  if (mode === 'collaborative') {
    if (user !== null) return unused('subwiki_user_id');
    if (group !== null) return unused('subwiki_group_id');
    return owner(null, null);
  }
  if (mode === 'individual') {
    if (group !== null) return unused('subwiki_group_id');
    const userId = user ?? actorId;
    if (!personLive) return fieldError('/subwiki_user_id', 'not_found', `No person ${userId} in this organisation.`);
    return owner(userId, null);
  }
  if (user !== null) return unused('subwiki_user_id');
  if (group === null) return fieldError('/subwiki_group_id', 'required', 'A group wiki needs `subwiki_group_id`: the group whose subwiki the page goes into.');
  return owner(null, group);
}

export function createWikiPageService(deps: { clock: Clock; cursors: CursorCodec; events: EventRecorder }) {
  const { clock, cursors, events } = deps;

  const record = (db: Db, organisationId: string, type: EventType, row: WikiPageRow, summary: string) =>
    events.record(db, organisationId, type, { id: row.id, activity_id: row.activity_id, course_id: row.course_id, wiki_id: row.wiki_id, subwiki_id: row.subwiki_id, summary });

  /** A page that may be read: a deleted page is gone for reads (the resource has no `deleted_at` to show). */
  async function readable(db: Db, organisationId: string, id: string): Promise<WikiPageRow> {
    const row = await foundOr404(wikiPagesRepository.findById(db, organisationId, id), 'wiki_page.not_found', `No wiki page ${id} in this organisation.`);
    if (row.deleted_at !== null) throw new ApiError('wiki_page.not_found', `Wiki page ${id} was deleted at ${row.deleted_at}; it is listed at /wiki_pages/deletions.`);
    return row;
  }

  /** A page that may change: a deleted page, or one in a deleted activity, is a conflict with that state. */
  async function writable(db: Db, organisationId: string, id: string): Promise<WikiPageRow> {
    const { activity_live: activityLive, ...row } = await foundOr404(wikiPagesRepository.findWithActivityLive(db, organisationId, id), 'wiki_page.not_found', `No wiki page ${id} in this organisation.`);
    if (row.deleted_at !== null) throw new ApiError('wiki_page.deleted', `Wiki page ${id} was deleted at ${row.deleted_at}; it can no longer change.`);
    if (!activityLive) throw activityDeleted(row.activity_id);
    return row;
  }

  async function requireFreeTitle(db: Db, organisationId: string, subwikiId: string, title: string, exceptId?: string): Promise<void> {
    if (await wikiPagesRepository.findLiveByTitle(db, organisationId, subwikiId, title, exceptId)) throw titleTaken(title);
  }

  /**
   * Makes the next version of `row` with this title and body (JSON text). The page moves only if it is still
   * at the version read, so of two simultaneous changes the second is a 409 rather than a lost update.
   */
  async function commitVersion(db: Db, organisationId: string, row: WikiPageRow, actorId: string, content: { title: string; body: string }, restoredFrom: number | null): Promise<WikiPageRow> {
    const at = nowIso(clock);
    const version = row.version + 1;
    const moved: PageContent = { ...content, version, updated_by: actorId, updated_at: at };
    const editConflict = () => new ApiError('wiki_page.edit_conflict', `Wiki page ${row.id} changed after version ${row.version} was read; read it again and retry.`);
    let updated: WikiPageRow | undefined;
    if (isPostgres(db)) {
      // Not waited on: the move travels with the version row, the event and the COMMIT, and fails them all when
      // the page moved meanwhile or the title was taken.
      await wikiPagesRepository.advanceDeferred(db, organisationId, row.id, row.version, moved, (err) => (isPremiseFailure(err) ? editConflict() : isTitleClash(err) ? titleTaken(content.title) : err));
      updated = { ...row, ...moved };
    } else {
      updated = await guardingTitle(content.title, () => wikiPagesRepository.advance(db, organisationId, row.id, row.version, moved));
    }
    if (!updated) throw editConflict();
    await wikiPagesRepository.insertVersion(db, { id: newId(), organisation_id: organisationId, wiki_page_id: row.id, version, ...content, restored_from: restoredFrom, created_by: actorId, created_at: at });
    return updated;
  }

  async function create(db: Db, organisationId: string, actorId: string, input: Static<typeof CreateWikiPage>): Promise<WikiPageView> {
    const at = nowIso(clock);
    const page = { ...newResourceRow(organisationId, input.external_id, at), activity_id: input.activity_id, title: input.title, body: JSON.stringify(input.body ?? null), version: 1, updated_by: actorId };
    const summary = `Wiki page ${quotedForSummary(page.title)} created.`;
    const owner = { userId: input.subwiki_user_id ?? actorId, groupId: input.subwiki_group_id ?? null };
    // The modes of wiki the request's fields fit (subwikiOwner's refusals but the person's, which is a premise).
    const modes = WIKI_MODES.filter((mode) => !(subwikiOwner(mode, input, actorId, true) instanceof ApiError));
    // One round trip (PostgreSQL, db/final-statement.ts): the page, its subwiki where it has none yet, its first
    // version and its event go with the COMMIT; a page not made (the activity absent, deleted or no wiki, a field
    // its wiki's mode has no use for, the person not there, the title or external id taken) refuses it, so that the
    // request runs again down here.
    if (finalStatementOffered() && modes.length > 0) return toWikiPageView(await wikiPagesRepository.createInOneStatement(db, page, owner, modes, newId(), summary));
    // The activity, its wiki, the subwiki the page goes into, whether the title is free and whether the person
    // is there, in one read; then the writes, which wait on nothing.
    const facts = await wikisRepository.pageCreationFacts(db, organisationId, input.activity_id, owner, input.title);
    const activity = refuseUnlessActivityOfType(facts, input.activity_id, 'wiki', '/activity_id');
    if (activity.wiki_id === null || activity.wiki_mode === null) throw new Error(`wiki activity ${input.activity_id} has no wiki`);
    const subwiki = subwikiOwner(activity.wiki_mode, input, actorId, Boolean(activity.person_live));
    if (subwiki instanceof ApiError) throw subwiki;
    if (activity.title_taken) throw titleTaken(input.title);
    const subwikiId = activity.subwiki_id ?? subwikiIdOf(input.activity_id, subwiki.key);
    if (activity.subwiki_id === null) {
      await wikisRepository.insertSubwiki(db, { id: subwikiId, organisation_id: organisationId, wiki_id: activity.wiki_id, owner_key: subwiki.key, user_id: subwiki.userId, group_id: subwiki.groupId, created_at: at });
    }
    const row: WikiPageRow = { ...page, course_id: activity.course_id, wiki_id: activity.wiki_id, subwiki_id: subwikiId, subwiki_user_id: subwiki.userId, subwiki_group_id: subwiki.groupId };
    // Deferred (db/deferred-writes.ts): a title or an external id taken meanwhile surfaces later, as the same 409s.
    await insertWithExternalId((onClash) => wikiPagesRepository.insert(db, row, (err) => (isTitleClash(err) ? titleTaken(row.title) : onClash(err))), 'wiki page', input.external_id);
    await wikiPagesRepository.insertVersion(db, { id: newId(), organisation_id: organisationId, wiki_page_id: row.id, version: 1, title: row.title, body: row.body, restored_from: null, created_by: actorId, created_at: at });
    await record(db, organisationId, 'wiki_page.created', row, summary);
    return toWikiPageView(row);
  }

  /** A PATCH that changes nothing makes no version and no event, and answers the page as it is. */
  async function update(db: Db, organisationId: string, actorId: string, id: string, patch: Static<typeof UpdateWikiPage>): Promise<WikiPageView> {
    // One round trip (PostgreSQL, db/final-statement.ts): the new version, its row and its event go with the
    // COMMIT, and a page not changed (absent, deleted, its activity deleted, the title another page's, already so)
    // refuses it, so that the request runs again down here. One statement moves the page from the version it
    // finds, so no other edit can come between a read and the write.
    if ((patch.title !== undefined || patch.body !== undefined) && finalStatementOffered()) {
      const changes = { title: patch.title, body: patch.body === undefined ? undefined : JSON.stringify(patch.body) };
      const at = nowIso(clock);
      const run = () => wikiPagesRepository.editInOneStatement(db, organisationId, id, actorId, changes, at);
      return toWikiPageView(await (patch.title === undefined ? run() : guardingTitle(patch.title, run)));
    }
    const row = await writable(db, organisationId, id);
    const title = patch.title ?? row.title;
    const body = patch.body === undefined ? row.body : JSON.stringify(patch.body);
    const changed = [title !== row.title ? 'title' : null, body !== row.body ? 'body' : null].filter((c) => c !== null);
    if (changed.length === 0) return toWikiPageView(row);
    // A title another live page of the subwiki has is refused by the unique index (commitVersion's guardingTitle):
    // the same 409 as a read before it would answer, one round trip fewer.
    const updated = await commitVersion(db, organisationId, row, actorId, { title, body }, null);
    await record(db, organisationId, 'wiki_page.updated', updated, `Wiki page ${quotedForSummary(updated.title)} edited (${changed.join(' and ')}): version ${updated.version}.`);
    return toWikiPageView(updated);
  }

  /**
   * spec: operation 4. Restoring a version whose title and body the page already has changes nothing: 200
   * with the page as it is, no new version, no event (so a retry without Idempotency-Key is harmless).
   */
  async function restore(db: Db, organisationId: string, actorId: string, id: string, version: number): Promise<WikiPageView> {
    const row = await writable(db, organisationId, id);
    // Versions run from 1 to the current one without gaps, so a greater number was never a version of this
    // page; it is refused before any query (it may also lie beyond the column's integer range).
    const target = version <= row.version ? await wikiPagesRepository.findVersion(db, organisationId, id, version) : undefined;
    if (!target) throw fieldError('/version', 'not_found', `Wiki page ${id} has versions 1 to ${row.version}; it never had version ${version}.`);
    if (target.title === row.title && target.body === row.body) return toWikiPageView(row);
    if (target.title !== row.title) await requireFreeTitle(db, organisationId, row.subwiki_id, target.title, row.id);
    const updated = await commitVersion(db, organisationId, row, actorId, { title: target.title, body: target.body }, version);
    await record(db, organisationId, 'wiki_page.restored', updated, `Wiki page ${quotedForSummary(updated.title)}: version ${version} restored as version ${updated.version}.`);
    return toWikiPageView(updated);
  }

  return {
    create,
    update,
    restore,

    get: async (db: Db, organisationId: string, id: string) => toWikiPageView(await readable(db, organisationId, id)),

    list: resourceList(cursors, {
      list: 'wiki_pages',
      page: wikiPagesRepository.page,
      map: toWikiPageView,
      filters: (params: ListParams & { activity_id?: string; course_id?: string; subwiki_id?: string }) => ({
        activity_id: params.activity_id,
        course_id: params.course_id,
        subwiki_id: params.subwiki_id,
      }),
    }),

    async remove(db: Db, organisationId: string, actorId: string, id: string): Promise<void> {
      // One round trip (PostgreSQL, db/final-statement.ts): the delete, its tombstone and its event go with the
      // COMMIT, and a page not live or of a deleted activity refuses it, so that the request runs again down here.
      if (finalStatementOffered()) return wikiPagesRepository.softDeleteInOneStatement(db, organisationId, id, actorId, nowIso(clock));
      const row = await writable(db, organisationId, id);
      await softDelete(db, organisationId, 'wiki_page', row, nowIso(clock), (patch) => wikiPagesRepository.update(db, organisationId, id, { ...patch, updated_by: actorId }));
      await record(db, organisationId, 'wiki_page.deleted', row, `Wiki page ${quotedForSummary(row.title)} deleted.`);
    },

    async getByExternalId(db: Db, organisationId: string, externalId: string): Promise<WikiPageView> {
      const row = await wikiPagesRepository.findByExternalId(db, organisationId, externalId);
      if (!row || row.deleted_at !== null) throw new ApiError('wiki_page.not_found', `No wiki page with external_id ${JSON.stringify(externalId)} in this organisation.`);
      return toWikiPageView(row);
    },

    /** Creates, or edits title and body; the page's activity and subwiki are fixed once it exists. */
    async upsertByExternalId(db: Db, organisationId: string, actorId: string, externalId: string, input: Static<typeof UpsertWikiPage>) {
      const existing = await wikiPagesRepository.findByExternalId(db, organisationId, externalId);
      if (!existing) return { created: true, view: await create(db, organisationId, actorId, { ...input, external_id: externalId }) };
      if (existing.deleted_at !== null) throw new ApiError('wiki_page.deleted', `Wiki page ${existing.id} with external_id ${JSON.stringify(externalId)} was deleted; it can no longer change.`);
      if (existing.activity_id !== input.activity_id) throw fieldError('/activity_id', 'immutable', 'A wiki page cannot move to another activity.');
      for (const field of ['subwiki_user_id', 'subwiki_group_id'] as const) {
        if (input[field] !== undefined && input[field] !== existing[field]) throw fieldError(`/${field}`, 'immutable', 'A wiki page cannot move to another subwiki.');
      }
      return { created: false, view: await update(db, organisationId, actorId, existing.id, { title: input.title, body: input.body }) };
    },

    /** The `wiki_page_versions` collection of one page, oldest first. */
    async listVersions(db: Db, organisationId: string, id: string, params: { limit?: number; cursor?: string }) {
      await readable(db, organisationId, id);
      return listPage(cursors, {
        list: 'wiki_page_versions',
        organisationId,
        params,
        filters: { wiki_page_id: id },
        fetch: (q) => wikiPagesRepository.versionsPage(db, organisationId, id, { afterVersion: q.after ? Number(q.after[0]) : undefined, limit: q.limit }),
        map: toWikiPageVersionView,
        position: (row) => [String(row.version)],
      });
    },

    async getVersion(db: Db, organisationId: string, id: string, version: number): Promise<WikiPageVersionView> {
      const page = await readable(db, organisationId, id);
      const row = version <= page.version ? await wikiPagesRepository.findVersion(db, organisationId, id, version) : undefined;
      if (!row) throw new ApiError('wiki_page.version_not_found', `Wiki page ${id} has versions 1 to ${page.version}; it never had version ${version}.`);
      return toWikiPageVersionView(row);
    },
  };
}

export type WikiPageService = ReturnType<typeof createWikiPageService>;
