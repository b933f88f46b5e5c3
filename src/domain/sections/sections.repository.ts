import { sql, type Compilable, type Selectable } from 'kysely';
import { isPostgres } from '../../db/column-types.ts';
import type { Db } from '../../db/database.ts';
import type { SectionsTable } from '../../db/tables.ts';
import { tenantRows } from '../../db/tenant-rows.ts';
import { preparedQuery, type PreparedArgument, type PreparedQuery } from '../../db/prepared.ts';
import { insertInOneStatement, updateLiveInOneStatement, type ColumnChange, liveRowSql } from '../one-statement-update.repository.ts';
import { quotedForSummarySql } from '../../events/summary-text.ts';
import { deletionsRepository } from '../deletions/deletions.repository.ts';
import { andThen, type MaybeAsync } from '../../maybe-async.ts';

export type SectionRow = Selectable<SectionsTable>;

type Changes = Pick<Partial<SectionRow>, 'title' | 'visible'>;

const firstRow = (rows: SectionRow[]): SectionRow | undefined => rows[0];

// spec operation 10 runs one of these on every PATCH: one per shape of the body, compiled once, each with RETURNING
// (PostgreSQL: the changed row comes back in the same round trip) and without (SQLite, below).
const liveSection = (db: Db, organisationId: string, id: string) =>
  db.updateTable('sections').where('organisation_id', '=', organisationId).where('id', '=', id).where('deleted_at', 'is', null);
type SectionUpdate = ReturnType<typeof liveSection>;

function updatesBy<R>(finish: (update: SectionUpdate) => Compilable<R>) {
  return {
    title: preparedQuery((db: Db, organisationId: string, id: string, at: string, title: string | null) =>
      finish(liveSection(db, organisationId, id).set({ title, updated_at: at }).where('title', 'is distinct from', title)),
    ),
    visible: preparedQuery((db: Db, organisationId: string, id: string, at: string, visible: boolean) =>
      finish(liveSection(db, organisationId, id).set({ visible, updated_at: at }).where('visible', 'is distinct from', visible)),
    ),
    both: preparedQuery((db: Db, organisationId: string, id: string, at: string, title: string | null, visible: boolean) =>
      finish(
        liveSection(db, organisationId, id)
          .set({ title, visible, updated_at: at })
          .where((eb) => eb.or([eb('title', 'is distinct from', title), eb('visible', 'is distinct from', visible)])),
      ),
    ),
  };
}
const returningRow = updatesBy((update) => update.returningAll());
// SQLite answers RETURNING from an ephemeral table it makes for each statement: in a loop over 1,000 sections, ten
// to a commit, the UPDATE costs 5.8 µs alone, 9.2 returning only the id and 10.3 returning the row, against 8.0-8.6
// for the UPDATE and a read of the row back by its key (bench/README.md). In a SQLite transaction both answer at once
// and nothing else can use the connection between them, so the row read back is the row the UPDATE made.
const countingChanges = updatesBy((update) => update);

export const sectionsRepository = {
  ...tenantRows('sections'),

  /**
   * Applies `changes` to a live section, only where some value really differs, and returns the updated row;
   * undefined when nothing was updated (no such live section, or nothing to change). In the write's transaction:
   * on PostgreSQL one statement, on SQLite the UPDATE and a read of the row it changed.
   */
  updateLiveIfChanged(db: Db, organisationId: string, id: string, changes: Changes, at: string): MaybeAsync<SectionRow | undefined> {
    const { title, visible } = changes;
    // PostgreSQL: the changed row with the UPDATE; SQLite: how many rows changed, then the row read back.
    const postgres = isPostgres(db);
    const apply = <A extends PreparedArgument[]>(withRow: PreparedQuery<A, SectionRow>, counting: PreparedQuery<A, unknown>, ...args: A): MaybeAsync<SectionRow[] | number> =>
      postgres ? withRow.now(db, ...args) : counting.changes(db, ...args);
    let done: MaybeAsync<SectionRow[] | number>;
    if (title !== undefined && visible !== undefined) done = apply(returningRow.both, countingChanges.both, organisationId, id, at, title, Boolean(visible));
    else if (title !== undefined) done = apply(returningRow.title, countingChanges.title, organisationId, id, at, title);
    else if (visible !== undefined) done = apply(returningRow.visible, countingChanges.visible, organisationId, id, at, Boolean(visible));
    else return undefined;
    return andThen(done, (result) => {
      if (typeof result !== 'number') return firstRow(result);
      return result === 0 ? undefined : sectionsRepository.findById(db, organisationId, id);
    });
  },

  /**
   * PostgreSQL, as a transaction's final statement (db/final-statement.ts): the change of updateLiveIfChanged and
   * its event, in one statement that fails (atrium_require) when it changed no row, so that it can travel with the
   * COMMIT. The event's data, `{"id","course_id","summary"}`, is made here (the course comes from the row).
   */
  updateLiveRecordingEvent(db: Db, organisationId: string, id: string, changes: Changes, at: string, summary: string): Promise<SectionRow> {
    const asked: ColumnChange[] = [];
    if (changes.title !== undefined) asked.push(['title', sql`${changes.title}::text`]);
    if (changes.visible !== undefined) asked.push(['visible', sql`${Boolean(changes.visible)}::boolean`]);
    return updateLiveInOneStatement<SectionRow>(db, 'sections', organisationId, id, asked, {
      type: 'section.updated',
      occurredAt: at,
      members: [['course_id', sql`u.course_id`], ['summary', sql`${summary}::text`]],
    });
  },

  /** PostgreSQL, as a final statement: the section's soft delete with its tombstone and event (deletions.repository.ts). */
  softDeleteInOneStatement(db: Db, organisationId: string, id: string, at: string): Promise<void> {
    // The summary as the service words it (describeTitle).
    const title = sql`coalesce(${quotedForSummarySql(sql`u.title`)}, '(untitled)')`;
    return deletionsRepository.softDeleteInOneStatement(db, 'sections', 'section', organisationId, id, {
      type: 'section.deleted',
      occurredAt: at,
      members: [['course_id', sql`u.course_id`], ['summary', sql`'Section ' || ${title} || ' deleted.'`]],
    });
  },

  /**
   * PostgreSQL, as a final statement (db/final-statement.ts): a new section, `row` as the service made it but for
   * its sort key, the one after the course's last (atrium_key_after: generateKeyBetween(last, null), as `placement`
   * reads the last), and its event `{"id","course_id","summary"}` saying `summary`. The premises: the course live
   * and the parent section, if one is named, a live section of it (otherwise the full path's 422 or 409); its
   * external id taken makes nothing either.
   */
  createInOneStatement(db: Db, row: Omit<SectionRow, 'sort_key'>, summary: string): Promise<SectionRow> {
    const org = row.organisation_id;
    const premises = [liveRowSql('courses', org, row.course_id)];
    if (row.parent_section_id !== null) {
      premises.push(sql<boolean>`exists(select 1 from sections p where p.organisation_id = ${org} and p.id = ${row.parent_section_id} and p.course_id = ${row.course_id} and p.deleted_at is null)`);
    }
    const last = sql`select s.sort_key from sections s where s.organisation_id = ${org} and s.course_id = ${row.course_id} order by s.sort_key desc limit 1`;
    return insertInOneStatement<SectionRow>(
      db,
      'sections',
      { ...row, sort_key: null },
      { type: 'section.created', occurredAt: row.created_at, members: [['course_id', sql`u.course_id`], ['summary', sql`${summary}::text`]] },
      { computed: [['sort_key', sql`atrium_key_after((${last}))`]], premises },
    );
  },

  /**
   * What a new section of `courseId` needs to know, in one statement: whether the course is there and live,
   * the greatest sort key in it (deleted sections included, so keys are never reused), and, when asked, the
   * course of `parentId` if that section is live. Undefined when the organisation has no such course.
   */
  async placement(db: Db, organisationId: string, courseId: string, parentId: string | null) {
    return db
      .selectFrom('courses')
      .select((eb) => [
        'courses.deleted_at',
        eb
          .selectFrom('sections')
          .select('sort_key')
          .where('sections.organisation_id', '=', organisationId)
          .where('sections.course_id', '=', eb.ref('courses.id'))
          .orderBy('sort_key', 'desc')
          .limit(1)
          .as('last_sort_key'),
        parentId === null
          ? sql<string | null>`null`.as('parent_course_id')
          : eb
              .selectFrom('sections')
              .select('sections.course_id')
              .where('sections.organisation_id', '=', organisationId)
              .where('sections.id', '=', parentId)
              .where('sections.deleted_at', 'is', null)
              .as('parent_course_id'),
      ])
      .where('courses.organisation_id', '=', organisationId)
      .where('courses.id', '=', courseId)
      .executeTakeFirst();
  },
};
