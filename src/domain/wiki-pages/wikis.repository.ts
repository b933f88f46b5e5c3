// Wikis (one per wiki activity) and their subwikis (one per owner: everybody, a person or a group).
import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { SubwikisTable, WikisTable } from '../../db/tables.ts';
import { newId } from '../../ids.ts';
import { deferredWrite } from '../../db/deferred-writes.ts';
import type { NamedStatement } from '../one-statement-update.repository.ts';

export type WikiRow = Selectable<WikisTable>;
export type SubwikiRow = Selectable<SubwikisTable>;

export interface SubwikiOwner {
  key: string;
  userId: string | null;
  groupId: string | null;
}

export const wikisRepository = {
  /** A deferred write (db/deferred-writes.ts): a new activity's wiki, whose result nobody reads, rides with the next statement. */
  async insert(db: Db, row: WikisTable): Promise<void> {
    await deferredWrite(db, db.insertInto('wikis').values(row));
  },

  /**
   * PostgreSQL: the wiki of the activity a one-statement create makes (`u`, one-statement-update.repository.ts), as
   * `insert` makes it, as a named CTE of that statement: made only with the activity.
   */
  insertWithActivitySql(mode: WikiRow['mode']): NamedStatement {
    return ['wiki', sql`insert into wikis (id, organisation_id, activity_id, mode, created_at) select ${newId()}::uuid, u.organisation_id, u.id, ${mode}::text, u.created_at from u`];
  },

  async byActivities(db: Db, organisationId: string, activityIds: string[]): Promise<WikiRow[]> {
    if (activityIds.length === 0) return [];
    return db.selectFrom('wikis').selectAll().where('organisation_id', '=', organisationId).where('activity_id', 'in', activityIds).execute();
  },

  /** PostgreSQL: the settings of the wiki activity `activityId` as settingsOf shows them (`{"mode":…}`), JSON text. */
  settingsJsonSql(organisationId: string, activityId: RawBuilder<unknown>): RawBuilder<string | null> {
    return sql<string | null>`(select json_build_object('mode', w.mode)::text from wikis w where w.organisation_id = ${organisationId} and w.activity_id = ${activityId})`;
  },

  /**
   * The activity `activityId` with its wiki's id and mode (null where it has none), in one read: a new page's
   * first facts.
   */
  activityWithWiki(db: Db, organisationId: string, activityId: string) {
    return db
      .selectFrom('activities')
      .leftJoin('wikis', (join) => join.onRef('wikis.activity_id', '=', 'activities.id').onRef('wikis.organisation_id', '=', 'activities.organisation_id'))
      .select(['activities.type', 'activities.course_id', 'activities.deleted_at', 'wikis.id as wiki_id', 'wikis.mode as wiki_mode'])
      .where('activities.organisation_id', '=', organisationId)
      .where('activities.id', '=', activityId)
      .executeTakeFirst();
  },

  /**
   * The owner's subwiki, made on first use (two first uses at once both get the one row), and whether a live page
   * of it is titled `title`: one round trip on PostgreSQL, where the INSERT, whose result nobody reads, rides with
   * the read (db/deferred-writes.ts).
   */
  async subwikiWithTitle(db: Db, organisationId: string, wikiId: string, owner: SubwikiOwner, at: string, title: string): Promise<SubwikiRow & { title_taken: unknown }> {
    await deferredWrite(
      db,
      db
        .insertInto('subwikis')
        .values({ id: newId(), organisation_id: organisationId, wiki_id: wikiId, owner_key: owner.key, user_id: owner.userId, group_id: owner.groupId, created_at: at })
        .onConflict((oc) => oc.columns(['wiki_id', 'owner_key']).doNothing()),
    );
    return db
      .selectFrom('subwikis')
      .selectAll()
      .select((eb) =>
        eb
          .exists(
            eb
              .selectFrom('wiki_pages')
              .select('wiki_pages.id')
              .where('wiki_pages.organisation_id', '=', organisationId)
              .whereRef('wiki_pages.subwiki_id', '=', 'subwikis.id')
              .where('wiki_pages.title', '=', title)
              .where('wiki_pages.deleted_at', 'is', null),
          )
          .as('title_taken'),
      )
      .where('organisation_id', '=', organisationId)
      .where('wiki_id', '=', wikiId)
      .where('owner_key', '=', owner.key)
      .executeTakeFirstOrThrow();
  },
};
