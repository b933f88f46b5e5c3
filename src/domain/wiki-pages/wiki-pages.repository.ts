// Wiki pages (the current version of each) and their versions. A version row is inserted once and never
// updated: the only writes to `wiki_page_versions` are inserts.
import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import type { WikiPagesTable, WikiPageVersionsTable } from '../../db/tables.ts';
import { tenantRows } from '../../db/tenant-rows.ts';

export type WikiPageRow = Selectable<WikiPagesTable>;
export type WikiPageVersionRow = Selectable<WikiPageVersionsTable>;

/** The columns a new version changes on the page. */
export type PageContent = Pick<WikiPageRow, 'title' | 'body' | 'version' | 'updated_by' | 'updated_at'>;

/** Whether a failed write clashed with the unique live title of a subwiki (PostgreSQL names the index, SQLite the columns). */
export function isTitleClash(err: unknown): boolean {
  const e = err as { constraint?: string; message?: string };
  return isUniqueViolation(err) && (e.constraint === 'wiki_pages_live_title_unique' || /wiki_pages\.title/.test(e.message ?? ''));
}

export const wikiPagesRepository = {
  ...tenantRows('wiki_pages'),

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

  async insertVersion(db: Db, row: WikiPageVersionRow): Promise<void> {
    await db.insertInto('wiki_page_versions').values(row).execute();
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
