import { sql, type ExpressionBuilder, type RawBuilder, type Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { LessonPagesTable, Tables } from '../../db/tables.ts';
import { preparedQuery } from '../../db/prepared.ts';
import type { FailureTranslation } from '../../db/deferred-writes.ts';
import { tenantRows } from '../../db/tenant-rows.ts';
import { changedColumnsSql, insertInOneStatement, updateLiveInOneStatement, type ColumnChange } from '../one-statement-update.repository.ts';
import { deletionsRepository } from '../deletions/deletions.repository.ts';
import { quotedForSummarySql } from '../../events/summary-text.ts';
import { extensionsRepository } from '../extensions/extensions.repository.ts';
import { activityLiveSql } from '../activities/activities.repository.ts';
import type { RowPageQuery } from '../../db/tenant-rows.ts';

export type LessonPageRow = Selectable<LessonPagesTable>;

const rows = tenantRows('lesson_pages');

// A bulk request of 500 upserts runs this 500 times: compiled once rather than built per call.
const byExternalId = preparedQuery((db: Db, organisationId: string, externalId: string) =>
  db.selectFrom('lesson_pages').selectAll().where('organisation_id', '=', organisationId).where('external_id', '=', externalId),
);

// A page changes only while its lesson is live (the full path's 409 activity.deleted says why not): over the
// page before its change (`b`), or the page being deleted.
// The event's members after its id, as the service's `record` writes them.
const eventMembers = (summary: RawBuilder<unknown>): Array<[string, RawBuilder<unknown>]> => [['lesson_id', sql`u.lesson_id`], ['course_id', sql`u.course_id`], ['summary', summary]];
const quotedTitle = quotedForSummarySql(sql`u.title`);

/** What a new page's checks read, at once (each null where absent or not asked). */
export interface CreationFacts {
  lesson_type: string | null;
  lesson_course_id: string | null;
  lesson_deleted_at: string | null;
  extension_disabled: boolean | number | null;
  last_sort_key: string | null;
}

/** Identifies a page by its id or by the caller's external id (bulk operations may use either). */
export type LessonPageRef = { id: string } | { external_id: string };

/** What a page's place in its lesson is read from. */
export type LessonPageKey = Pick<LessonPageRow, 'id' | 'lesson_id' | 'sort_key' | 'deleted_at'>;

/** A row of namedInBulk: an activity (`a_…`), a page of it (null where it has none) and the extensions' switches. */
export type NamedInBulkRow = { a_id: string | null; a_type: string | null; a_course_id: string | null; a_deleted_at: string | null } & { [C in keyof LessonPageRow]: LessonPageRow[C] | null } & {
  [disabled: `disabled_${number}`]: boolean | number;
};

/** An activity a page's lesson id names, with the greatest sort key of its pages (deleted ones included). */
export interface NamedLesson {
  id: string;
  type: string;
  course_id: string;
  deleted_at: string | null;
  last_sort_key: string | null;
}

export const lessonPagesRepository = {
  ...rows,

  /**
   * A deferred write (db/deferred-writes.ts): on PostgreSQL the new page rides with the next statement (its event,
   * the COMMIT), and a taken external id surfaces there as `onClash` says (a 409).
   */
  insert(db: Db, row: LessonPageRow, onClash: FailureTranslation): Promise<void> {
    return rows.insert(db, row, onClash);
  },

  /**
   * PostgreSQL, as a final statement (one-statement-update.repository.ts): a new title or contents (JSON text) of
   * a live page of a live lesson, and its event worded as the service words it, naming what really changed.
   */
  updateInOneStatement(db: Db, organisationId: string, id: string, changes: { title?: string; contents?: string | null }, at: string): Promise<LessonPageRow> {
    const asked: ColumnChange[] = [];
    if (changes.title !== undefined) asked.push(['title', sql`${changes.title}::text`]);
    if (changes.contents !== undefined) asked.push(['contents', sql`${changes.contents}::text`]);
    const summary = sql`'Lesson page ' || ${quotedTitle} || ' changed: ' || ${changedColumnsSql(asked.map(([column]) => column))} || '.'`;
    return updateLiveInOneStatement(db, 'lesson_pages', organisationId, id, asked, { type: 'lesson_page.updated', occurredAt: at, members: eventMembers(summary) }, {
      premises: [activityLiveSql('b', 'lesson_id')],
    });
  },

  /**
   * PostgreSQL, as a final statement (one-statement-update.repository.ts): a new page at the end of its lesson,
   * `row` as the service made it but for its course (its lesson's) and its sort key, as generateKeyBetween makes it
   * (the placement of the service): after the lesson's last (atrium_key_after), or, placed (`afterPageId`),
   * between its neighbours (atrium_key_between); with its event as the service's `record` writes it. The
   * premises, each a refusal of the full path: the lesson a live lesson activity, the question type's extension
   * (`extension`) not switched off, each page an answer jumps to (`jumpTargets`) and the page it is placed after a
   * live page of the lesson; an external id taken makes nothing either.
   */
  createInOneStatement(db: Db, row: Omit<LessonPageRow, 'course_id' | 'sort_key'>, summary: string, checks: { extension: string | undefined; jumpTargets: readonly string[]; afterPageId?: string | null }): Promise<LessonPageRow> {
    const org = row.organisation_id;
    const lesson = sql`select a.course_id from activities a where a.organisation_id = ${org} and a.id = ${row.lesson_id} and a.type = 'lesson' and a.deleted_at is null`;
    const premises = [sql<boolean>`exists(${lesson})`];
    if (checks.extension !== undefined) premises.push(sql<boolean>`not ${extensionsRepository.isDisabledSql(org, checks.extension)}`);
    // Compared as text: a jump names a page or a keyword, and a string that is no uuid names no page.
    for (const page of checks.jumpTargets) {
      premises.push(sql<boolean>`exists(select 1 from lesson_pages p where p.organisation_id = ${org} and p.lesson_id = ${row.lesson_id} and p.id::text = ${page}::text and p.deleted_at is null)`);
    }
    // Its key (keys of deleted pages count: they are never given again): after the lesson's last; before its
    // first (`after_page_id: null`); or between the page named, a live page of the lesson, and the next key.
    const keys = sql`select p.sort_key from lesson_pages p where p.organisation_id = ${org} and p.lesson_id = ${row.lesson_id}`;
    let sortKey: RawBuilder<unknown>;
    if (checks.afterPageId === undefined) sortKey = sql`atrium_key_after((${keys} order by p.sort_key desc limit 1))`;
    else if (checks.afterPageId === null) sortKey = sql`atrium_key_between(null, (${keys} order by p.sort_key limit 1))`;
    else {
      const anchor = sql`(${keys} and p.id = ${checks.afterPageId}::uuid and p.deleted_at is null)`;
      premises.push(sql<boolean>`exists${anchor}`);
      sortKey = sql`atrium_key_between(${anchor}, (${keys} and p.sort_key > ${anchor} order by p.sort_key limit 1))`;
    }
    const event = { type: 'lesson_page.created' as const, occurredAt: row.created_at, members: eventMembers(sql`${summary}::text`) };
    return insertInOneStatement<LessonPageRow>(db, 'lesson_pages', { ...row, course_id: null, sort_key: null }, event, {
      computed: [
        ['course_id', sql`(${lesson})`],
        ['sort_key', sortKey],
      ],
      premises,
    });
  },

  /** PostgreSQL, as a final statement: a live page's soft delete (its lesson live), its tombstone and event (deletions.repository.ts). */
  softDeleteInOneStatement(db: Db, organisationId: string, id: string, at: string): Promise<void> {
    const event = { type: 'lesson_page.deleted' as const, occurredAt: at, members: eventMembers(sql`'Lesson page ' || ${quotedTitle} || ' deleted.'`) };
    return deletionsRepository.softDeleteInOneStatement(db, 'lesson_pages', 'lesson_page', organisationId, id, event, { premises: [activityLiveSql('lesson_pages', 'lesson_id')] });
  },

  /**
   * The facts a new page's checks need, in one read rather than one each (a round trip each on PostgreSQL,
   * inside the transaction): its lesson (`lessonId`), the switch of its question type's extension, the greatest
   * sort key of the lesson `lastKeyOf` (deleted pages included, so that keys are never reused).
   */
  async creationFacts(db: Db, organisationId: string, q: { lessonId?: string; extension?: string; lastKeyOf?: string }): Promise<CreationFacts> {
    const lesson = () => db.selectFrom('activities').where('organisation_id', '=', organisationId).where('id', '=', q.lessonId ?? null);
    const none = db.selectNoFrom(sql<null>`null`.as('none'));
    const row = await db
      .selectNoFrom([
        lesson().select('type').as('lesson_type'),
        lesson().select('course_id').as('lesson_course_id'),
        lesson().select('deleted_at').as('lesson_deleted_at'),
        (q.extension === undefined ? sql<boolean | number | null>`null` : sql<boolean | number | null>`${extensionsRepository.isDisabledSql(organisationId, q.extension)}`).as('extension_disabled'),
        (q.lastKeyOf === undefined
          ? none
          : db.selectFrom('lesson_pages').select('sort_key').where('organisation_id', '=', organisationId).where('lesson_id', '=', q.lastKeyOf).orderBy('sort_key', 'desc').limit(1)
        ).as('last_sort_key'),
      ])
      .executeTakeFirstOrThrow();
    return row as CreationFacts;
  },

  /**
   * The activities `ids` with, for each, the greatest sort key of its pages (deleted ones included): what a bulk
   * request's creates would read one lesson at a time, in one query.
   */
  lessonsWithLastKeys(db: Db, organisationId: string, ids: string[]) {
    if (ids.length === 0) return Promise.resolve([]);
    return db
      .selectFrom('activities')
      .select(['activities.id', 'activities.type', 'activities.course_id', 'activities.deleted_at'])
      .select((eb) =>
        eb
          .selectFrom('lesson_pages')
          .select((p) => p.fn.max('lesson_pages.sort_key').as('last'))
          .whereRef('lesson_pages.organisation_id', '=', 'activities.organisation_id')
          .whereRef('lesson_pages.lesson_id', '=', 'activities.id')
          .as('last_sort_key'),
      )
      .where('activities.organisation_id', '=', organisationId)
      .where('activities.id', 'in', ids)
      .execute();
  },

  /**
   * What a bulk request's operations name, in one statement (inside a transaction, each statement is a round trip
   * on PostgreSQL): the activities the creates name as lessons and those that are the lessons of the pages named
   * by id or external id, each with every page it has (deleted ones included), whole for the pages named and as
   * their keys for the others; and, on every row, whether each of `extensions` is switched off. One row at least,
   * with nulls where there is no activity.
   */
  namedInBulk(db: Db, organisationId: string, named: { pageIds: ReadonlySet<string>; externalIds: ReadonlySet<string>; lessonIds: ReadonlySet<string>; extensions: readonly string[] }): Promise<NamedInBulkRow[]> {
    const pageIds = [...named.pageIds];
    const externalIds = [...named.externalIds];
    const lessonIds = [...named.lessonIds];
    const namedPage = <T extends 'lesson_pages' | 'p'>(eb: ExpressionBuilder<Tables & { p: LessonPagesTable }, T>, table: T) =>
      eb.or([...(pageIds.length > 0 ? [eb(`${table}.id` as never, 'in', pageIds as never)] : []), ...(externalIds.length > 0 ? [eb(`${table}.external_id` as never, 'in', externalIds as never)] : [])]);
    const lessonsOfNamedPages = db.selectFrom('lesson_pages').select('lesson_pages.lesson_id').where('lesson_pages.organisation_id', '=', organisationId).where((eb) => namedPage(eb, 'lesson_pages'));
    const anyPage = pageIds.length > 0 || externalIds.length > 0;
    return db
      .selectFrom(db.selectNoFrom(sql<number>`1`.as('one')).as('base'))
      .leftJoin('activities as a', (join) =>
        join.on((eb) =>
          eb.and([
            eb('a.organisation_id', '=', organisationId),
            eb.or([...(lessonIds.length > 0 ? [eb('a.id', 'in', lessonIds)] : []), ...(anyPage ? [eb('a.id', 'in', lessonsOfNamedPages)] : [])]),
          ]),
        ),
      )
      .leftJoin('lesson_pages as p', (join) => join.onRef('p.organisation_id', '=', 'a.organisation_id').onRef('p.lesson_id', '=', 'a.id'))
      .select(['a.id as a_id', 'a.type as a_type', 'a.course_id as a_course_id', 'a.deleted_at as a_deleted_at'])
      .select(['p.id', 'p.organisation_id', 'p.external_id', 'p.created_at', 'p.updated_at', 'p.deleted_at', 'p.lesson_id', 'p.course_id', 'p.title', 'p.page_type', 'p.sort_key'])
      .select((eb) => {
        // The text of a page is read only for the pages named: the others' places are all the batch needs.
        const whole = anyPage ? namedPage(eb as never, 'p') : sql<boolean>`false`;
        return [eb.case().when(whole).then(eb.ref('p.contents')).end().as('contents'), eb.case().when(whole).then(eb.ref('p.answers')).end().as('answers')];
      })
      .select(named.extensions.map((extension, i) => sql<boolean | number>`${extensionsRepository.isDisabledSql(organisationId, extension)}`.as(`disabled_${i}`)))
      .execute() as Promise<NamedInBulkRow[]>;
  },

  async findByExternalId(db: Db, organisationId: string, externalId: string): Promise<LessonPageRow | undefined> {
    return (await byExternalId(db, organisationId, externalId))[0];
  },

  /** The page `ref` names, and whether its lesson is live (one read where there were two). */
  find(db: Db, organisationId: string, ref: LessonPageRef): Promise<(LessonPageRow & { lesson_live: boolean | number }) | undefined> {
    let query = db.selectFrom('lesson_pages').selectAll().select(activityLiveSql('lesson_pages', 'lesson_id').as('lesson_live')).where('organisation_id', '=', organisationId);
    query = 'id' in ref ? query.where('id', '=', ref.id) : query.where('external_id', '=', ref.external_id);
    return query.executeTakeFirst();
  },

  /**
   * Keyset page. Without `updated_since`, pages come in lesson order: by lesson, then sort key (ties, which
   * only simultaneous appends can make, by id); `after` is the last row's (lesson_id, sort_key, id).
   */
  page(db: Db, organisationId: string, q: RowPageQuery): Promise<LessonPageRow[]> {
    if (q.order !== 'id') return rows.page(db, organisationId, q);
    let query = db.selectFrom('lesson_pages').selectAll().where('organisation_id', '=', organisationId);
    if (q.where.lesson_id !== undefined) query = query.where('lesson_id', '=', q.where.lesson_id);
    if (!q.includeDeleted) query = query.where('deleted_at', 'is', null);
    if (q.after) {
      const [lessonId, sortKey, id] = q.after;
      query = query.where((eb) => eb(eb.refTuple('lesson_id', 'sort_key', 'id'), '>', eb.tuple(lessonId, sortKey, id)));
    }
    return query.orderBy('lesson_id').orderBy('sort_key').orderBy('id').limit(q.limit + 1).execute();
  },

  /** The smallest sort key of the lesson after `after` (null: the first key), other than `exceptId`'s. */
  async sortKeyAfter(db: Db, organisationId: string, lessonId: string, after: string | null, exceptId: string | undefined): Promise<string | null> {
    let query = db.selectFrom('lesson_pages').select('sort_key').where('organisation_id', '=', organisationId).where('lesson_id', '=', lessonId);
    if (after !== null) query = query.where('sort_key', '>', after);
    if (exceptId !== undefined) query = query.where('id', '!=', exceptId);
    const row = await query.orderBy('sort_key').limit(1).executeTakeFirst();
    return row?.sort_key ?? null;
  },

  /** The live page right before `row` in its lesson, or undefined when it is the first. */
  previousLive(db: Db, organisationId: string, row: Pick<LessonPageRow, 'lesson_id' | 'sort_key' | 'id'>): Promise<Pick<LessonPageRow, 'id'> | undefined> {
    return db
      .selectFrom('lesson_pages')
      .select('id')
      .where('organisation_id', '=', organisationId)
      .where('lesson_id', '=', row.lesson_id)
      .where('deleted_at', 'is', null)
      .where((eb) => eb(eb.refTuple('sort_key', 'id'), '<', eb.tuple(row.sort_key, row.id)))
      .orderBy('sort_key', 'desc')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
  },

  /** Which of `ids` are live pages of the lesson. */
  async livePagesOf(db: Db, organisationId: string, lessonId: string, ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const found = await db
      .selectFrom('lesson_pages')
      .select('id')
      .where('organisation_id', '=', organisationId)
      .where('lesson_id', '=', lessonId)
      .where('id', 'in', ids)
      .where('deleted_at', 'is', null)
      .execute();
    return new Set(found.map((r) => r.id));
  },
};
