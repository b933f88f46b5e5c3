// Wiki pages (the current version of each) and their versions. A version row is inserted once and never
// updated: the only writes to `wiki_page_versions` are inserts.
import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import type { WikiPagesTable, WikiPageVersionsTable, WikisTable } from '../../db/tables.ts';
import { tenantRows } from '../../db/tenant-rows.ts';
import { newId } from '../../ids.ts';
import { deferredWrite } from '../../db/deferred-writes.ts';
import { changedColumnsSql, insertInOneStatement, updateLiveInOneStatement, type ColumnChange } from '../one-statement-update.repository.ts';
import { ownerKeyOf, ownerKeySql, subwikiIdOf } from './wikis.repository.ts';
import { deletionsRepository } from '../deletions/deletions.repository.ts';
import { quotedForSummarySql } from '../../events/summary-text.ts';
import { activityLiveSql } from '../activities/activities.repository.ts';

export type WikiPageRow = Selectable<WikiPagesTable>;
export type WikiPageVersionRow = Selectable<WikiPageVersionsTable>;

/** A new page as the service makes it, before it is placed in its wiki and subwiki. */
export type NewPage = Omit<WikiPageRow, 'course_id' | 'wiki_id' | 'subwiki_id' | 'subwiki_user_id' | 'subwiki_group_id'>;
type WikiMode = Selectable<WikisTable>['mode'];

/** The columns a new version changes on the page. */
export type PageContent = Pick<WikiPageRow, 'title' | 'body' | 'version' | 'updated_by' | 'updated_at'>;

/** Whether a failed write clashed with the unique live title of a subwiki (PostgreSQL names the index, SQLite the columns). */
export function isTitleClash(err: unknown): boolean {
  const e = err as { constraint?: string; message?: string };
  return isUniqueViolation(err) && (e.constraint === 'wiki_pages_live_title_unique' || /wiki_pages\.title/.test(e.message ?? ''));
}

// A page changes only while its activity is live (the full path's 409 activity.deleted says why not): over the
// page before its change (`b`), or the page being deleted.
// The event's members after its id, as the service's `record` writes them.
const eventMembers = (summary: RawBuilder<unknown>): Array<[string, RawBuilder<unknown>]> => [
  ['activity_id', sql`u.activity_id`],
  ['course_id', sql`u.course_id`],
  ['wiki_id', sql`u.wiki_id`],
  ['subwiki_id', sql`u.subwiki_id`],
  ['summary', summary],
];
const quotedTitle = quotedForSummarySql(sql`u.title`);

export const wikiPagesRepository = {
  ...tenantRows('wiki_pages'),

  /** The page, and whether its activity is live (one read where there were two). */
  findWithActivityLive(db: Db, organisationId: string, id: string): Promise<(WikiPageRow & { activity_live: boolean | number }) | undefined> {
    return db.selectFrom('wiki_pages').selectAll().select(activityLiveSql('wiki_pages', 'activity_id').as('activity_live')).where('organisation_id', '=', organisationId).where('id', '=', id).executeTakeFirst();
  },

  /** A live page of the subwiki with this title, other than `exceptId`. */
  findLiveByTitle(db: Db, organisationId: string, subwikiId: string, title: string, exceptId?: string): Promise<WikiPageRow | undefined> {
    let q = db
      .selectFrom('wiki_pages')
      .selectAll()
      .where('organisation_id', '=', organisationId)
      .where('subwiki_id', '=', subwikiId)
      .where('title', '=', title)
      .where('deleted_at', 'is', null);
    if (exceptId) q = q.where('id', '!=', exceptId);
    return q.executeTakeFirst();
  },

  /**
   * Moves a live page from `fromVersion` to the content given, in one statement that matches only while the
   * page is still at `fromVersion`: undefined when another write got there first (or the page went away).
   */
  advance(db: Db, organisationId: string, id: string, fromVersion: number, content: PageContent): Promise<WikiPageRow | undefined> {
    return db
      .updateTable('wiki_pages')
      .set(content)
      .where('organisation_id', '=', organisationId)
      .where('id', '=', id)
      .where('version', '=', fromVersion)
      .where('deleted_at', 'is', null)
      .returningAll()
      .executeTakeFirst();
  },

  /**
   * PostgreSQL, as a final statement (one-statement-update.repository.ts): a new page, `page` as the service made
   * it, in the subwiki of its activity's wiki that `owner` names by the wiki's mode (made with it where it has none
   * yet, with the id subwikiIdOf gives), with its first version (`versionId`) and its event saying `summary`. The
   * premises, each a refusal of the full path: the activity a live wiki activity whose mode is one of `modes` (those
   * the request's fields fit), an individual wiki's person a live person; a title or external id taken makes
   * nothing either.
   */
  createInOneStatement(db: Db, page: NewPage, owner: { userId: string; groupId: string | null }, modes: readonly WikiMode[], versionId: string, summary: string): Promise<WikiPageRow> {
    const org = page.organisation_id;
    const personLive = sql`exists(select 1 from people pe where pe.organisation_id = ${org} and pe.id = ${owner.userId} and pe.deleted_at is null)`;
    const wiki = sql`select a.course_id, w.id as wiki_id, w.mode, ${ownerKeySql(sql`w.mode`, owner)} as owner_key
      from activities a join wikis w on w.organisation_id = a.organisation_id and w.activity_id = a.id
      where a.organisation_id = ${org} and a.id = ${page.activity_id} and a.type = 'wiki' and a.deleted_at is null
        and w.mode in (${sql.join(modes.map((mode) => sql`${mode}::text`))}) and (w.mode <> 'individual' or ${personLive})`;
    const madeId = sql`case f.mode ${sql.join(modes.map((mode) => sql`when ${mode}::text then ${subwikiIdOf(page.activity_id, ownerKeyOf(mode, owner))}::uuid`), sql` `)} end`;
    const subwikiId = sql`coalesce((select s.id from subwikis s where s.organisation_id = ${org} and s.wiki_id = f.wiki_id and s.owner_key = f.owner_key), ${madeId})`;
    const event = { type: 'wiki_page.created' as const, occurredAt: page.created_at, members: eventMembers(sql`${summary}::text`) };
    const placed = { course_id: null, wiki_id: null, subwiki_id: null, subwiki_user_id: null, subwiki_group_id: null };
    return insertInOneStatement<WikiPageRow>(db, 'wiki_pages', { ...page, ...placed }, event, {
      given: [['f', wiki]],
      computed: [
        ['course_id', sql`(select f.course_id from f)`],
        ['wiki_id', sql`(select f.wiki_id from f)`],
        ['subwiki_id', sql`(select ${subwikiId} from f)`],
        ['subwiki_user_id', sql`(select case when f.mode = 'individual' then ${owner.userId}::uuid end from f)`],
        ['subwiki_group_id', sql`(select case when f.mode = 'group' then ${owner.groupId}::uuid end from f)`],
      ],
      premises: [sql<boolean>`exists(select 1 from f)`],
      effects: [
        ['subwiki', sql`insert into subwikis (id, organisation_id, wiki_id, owner_key, user_id, group_id, created_at) select u.subwiki_id, u.organisation_id, u.wiki_id, f.owner_key, u.subwiki_user_id, u.subwiki_group_id, u.created_at from u, f on conflict do nothing`],
        ['first_version', sql`insert into wiki_page_versions (id, organisation_id, wiki_page_id, version, title, body, restored_from, created_by, created_at) select ${versionId}::uuid, u.organisation_id, u.id, u.version, u.title, u.body, null, u.updated_by, u.created_at from u`],
      ],
    });
  },

  /**
   * PostgreSQL: advance, as a write deferred to the transaction's next statement or its COMMIT (no round trip of
   * its own): it fails (atrium_require) when the page was not live at `fromVersion`, and `translate` says what
   * that failure, or a title taken (the unique index), answers.
   */
  async advanceDeferred(db: Db, organisationId: string, id: string, fromVersion: number, content: PageContent, translate: (err: unknown) => unknown): Promise<void> {
    const moved = db.updateTable('wiki_pages').set(content).where('organisation_id', '=', organisationId).where('id', '=', id).where('version', '=', fromVersion).where('deleted_at', 'is', null).returning('id');
    const statement = sql`with u as (${moved}) select atrium_require(exists(select 1 from u), 'wiki page at its version')`;
    await deferredWrite(db, { compile: () => statement.compile(db) }, translate);
  },

  /**
   * PostgreSQL, as a final statement (one-statement-update.repository.ts): a new title or body (JSON text) of a
   * live page of a live activity, as its next version (the version row with it, by `actorId`), and its event
   * worded as the service words it. A title another live page of the subwiki has changes nothing: the full path
   * answers the 409.
   */
  editInOneStatement(db: Db, organisationId: string, id: string, actorId: string, changes: { title?: string; body?: string }, at: string): Promise<WikiPageRow> {
    const asked: ColumnChange[] = [];
    if (changes.title !== undefined) asked.push(['title', sql`${changes.title}::text`]);
    if (changes.body !== undefined) asked.push(['body', sql`${changes.body}::text`]);
    const premises = [activityLiveSql('b', 'activity_id')];
    if (changes.title !== undefined) {
      premises.push(sql<boolean>`not exists(select 1 from wiki_pages p where p.organisation_id = b.organisation_id and p.subwiki_id = b.subwiki_id and p.title = ${changes.title}::text and p.deleted_at is null and p.id <> b.id)`);
    }
    const version = sql`insert into wiki_page_versions (id, organisation_id, wiki_page_id, version, title, body, restored_from, created_by, created_at)
      select ${newId()}::uuid, ${organisationId}::uuid, u.id, u.version, u.title, u.body, null, ${actorId}::uuid, ${at}::timestamptz from u`;
    const changed = changedColumnsSql(asked.map(([column]) => column), ' and ');
    const summary = sql`'Wiki page ' || ${quotedTitle} || ' edited (' || ${changed} || '): version ' || u.version || '.'`;
    return updateLiveInOneStatement(db, 'wiki_pages', organisationId, id, asked, { type: 'wiki_page.updated', occurredAt: at, members: eventMembers(summary) }, {
      premises,
      alsoSet: [['version', sql`b.version + 1`], ['updated_by', sql`${actorId}::uuid`]],
      effects: [['version_row', version]],
    });
  },

  /** PostgreSQL, as a final statement: a live page's soft delete by `actorId` (its activity live), its tombstone and event (deletions.repository.ts). */
  softDeleteInOneStatement(db: Db, organisationId: string, id: string, actorId: string, at: string): Promise<void> {
    const event = { type: 'wiki_page.deleted' as const, occurredAt: at, members: eventMembers(sql`'Wiki page ' || ${quotedTitle} || ' deleted.'`) };
    return deletionsRepository.softDeleteInOneStatement(db, 'wiki_pages', 'wiki_page', organisationId, id, event, {
      premises: [activityLiveSql('wiki_pages', 'activity_id')],
      set: [['updated_by', sql`${actorId}::uuid`]],
    });
  },

  /** A deferred write (db/deferred-writes.ts): nobody reads its result, so on PostgreSQL it rides with the next statement. */
  async insertVersion(db: Db, row: WikiPageVersionRow): Promise<void> {
    await deferredWrite(db, db.insertInto('wiki_page_versions').values(row));
  },

  findVersion(db: Db, organisationId: string, pageId: string, version: number): Promise<WikiPageVersionRow | undefined> {
    return db
      .selectFrom('wiki_page_versions')
      .selectAll()
      .where('organisation_id', '=', organisationId)
      .where('wiki_page_id', '=', pageId)
      .where('version', '=', version)
      .executeTakeFirst();
  },

  /** Versions in order; `afterVersion` is the last one of the previous page. One extra row tells if more follow. */
  versionsPage(db: Db, organisationId: string, pageId: string, q: { afterVersion?: number; limit: number }): Promise<WikiPageVersionRow[]> {
    let query = db.selectFrom('wiki_page_versions').selectAll().where('organisation_id', '=', organisationId).where('wiki_page_id', '=', pageId);
    if (q.afterVersion !== undefined) query = query.where('version', '>', q.afterVersion);
    return query.orderBy('version').limit(q.limit + 1).execute();
  },
};
