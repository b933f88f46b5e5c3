// Wikis (one per wiki activity) and their subwikis (one per owner: everybody, a person or a group).
import { createHash } from 'node:crypto';
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

/** What a new page's checks read (wikisRepository.pageCreationFacts). */
export interface PageCreationFacts {
  type: string;
  course_id: string;
  deleted_at: string | null;
  wiki_id: string | null;
  wiki_mode: WikiRow['mode'] | null;
  subwiki_id: string | null;
  title_taken: boolean | number;
  person_live: boolean | number;
}

/**
 * The key of the subwiki a page goes into, by its wiki's mode (`mode`, SQL): everybody's, the person's, or the
 * group's; null for a group wiki without a group. `cast … as text` types the parameters on both databases.
 */
export const ownerKeySql = (mode: RawBuilder<unknown>, owner: { userId: string; groupId: string | null }): RawBuilder<string | null> =>
  sql`case ${mode} when 'collaborative' then 'common' when 'individual' then 'user:' || cast(${owner.userId} as text) when 'group' then 'group:' || cast(${owner.groupId} as text) end`;

/**
 * A subwiki's id, made from its wiki's activity and its owner key rather than drawn: whoever makes it first, and
 * however many make it at once, it is the same row. A UUID of version 8 (RFC 9562: its bits the service's own),
 * from the MD5 of `<activity id>/<owner key>`. Subwikis made before this have drawn ids; they are found by their
 * key, never made again.
 */
export function subwikiIdOf(activityId: string, ownerKey: string): string {
  const hex = createHash('md5').update(`${activityId}/${ownerKey}`).digest('hex');
  const variant = ((Number.parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The key of the subwiki a page goes into in a wiki of `mode`: everybody's, the person's, or the group's. */
export function ownerKeyOf(mode: WikiRow['mode'], owner: { userId: string; groupId: string | null }): string {
  return mode === 'collaborative' ? 'common' : mode === 'individual' ? `user:${owner.userId}` : `group:${owner.groupId}`;
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
   * What a new page's checks read, at once (one round trip): the activity `activityId` and its wiki's id and mode
   * (null where absent), the subwiki the page would go into by that mode (`owner`: the person and group the
   * request names; null where it has none yet), whether a live page of it is titled `title`, and whether the
   * person an individual wiki's page would belong to is a live person of the organisation.
   */
  pageCreationFacts(db: Db, organisationId: string, activityId: string, owner: { userId: string; groupId: string | null }, title: string): Promise<PageCreationFacts | undefined> {
    return sql<PageCreationFacts>`
      select a.type, a.course_id, a.deleted_at, w.id as wiki_id, w.mode as wiki_mode, s.id as subwiki_id,
        exists(select 1 from wiki_pages p where p.organisation_id = a.organisation_id and p.subwiki_id = s.id and p.title = ${title} and p.deleted_at is null) as title_taken,
        exists(select 1 from people pe where pe.organisation_id = a.organisation_id and pe.id = ${owner.userId} and pe.deleted_at is null) as person_live
      from activities a
      left join wikis w on w.organisation_id = a.organisation_id and w.activity_id = a.id
      left join subwikis s on s.organisation_id = a.organisation_id and s.wiki_id = w.id and s.owner_key = ${ownerKeySql(sql`w.mode`, owner)}
      where a.organisation_id = ${organisationId} and a.id = ${activityId}`
      .execute(db)
      .then((result) => result.rows[0]);
  },

  /**
   * A deferred write (db/deferred-writes.ts): the owner's subwiki where it has none yet, with the id it has
   * wherever it is made (subwikiIdOf), so that two first pages of one owner at once both go into the one row.
   */
  async insertSubwiki(db: Db, row: SubwikiRow): Promise<void> {
    await deferredWrite(db, db.insertInto('subwikis').values(row).onConflict((oc) => oc.doNothing()));
  },
};
