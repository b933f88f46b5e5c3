import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { EnrolmentMethodsTable, EnrolmentsTable } from '../../db/tables.ts';
import { tenantRows } from '../../db/tenant-rows.ts';
import { changedColumnsSql, insertInOneStatement, updateLiveInOneStatement, type ColumnChange, liveRowSql } from '../one-statement-update.repository.ts';
import { deletionsRepository } from '../deletions/deletions.repository.ts';
import { extensionsRepository } from '../extensions/extensions.repository.ts';

export type EnrolmentMethodRow = Selectable<EnrolmentMethodsTable>;

/** What a PATCH asks of a method, as stored (settings as their JSON text). */
export type MethodChanges = Partial<Pick<EnrolmentMethodRow, 'name' | 'status' | 'role' | 'settings'>>;

// The order in which the service lists what changed.
const UPDATABLE = ['name', 'status', 'role', 'settings'] as const;

/** The method as the service's `label` names it in summaries, of the changed row `u`. */
const labelSql = sql`case when u.name is null or u.name = '' then u.type else to_json(u.name)::text || ' (' || u.type || ')' end`;

export const enrolmentMethodsRepository = {
  ...tenantRows('enrolment_methods'),

  /** A method with the number of live enrolments made through it (what its delete decides on), in one query. */
  async findWithLiveEnrolments(db: Db, organisationId: string, id: string): Promise<(EnrolmentMethodRow & { live_enrolments: number }) | undefined> {
    const row = await db
      .selectFrom('enrolment_methods as m')
      .selectAll('m')
      .select((eb) =>
        eb
          .selectFrom('enrolments as e')
          .select(eb.fn.countAll<number>().as('n'))
          .where('e.organisation_id', '=', organisationId)
          .whereRef('e.enrolment_method_id', '=', 'm.id')
          .where('e.deleted_at', 'is', null)
          .as('live_enrolments'),
      )
      .where('m.organisation_id', '=', organisationId)
      .where('m.id', '=', id)
      .executeTakeFirst();
    return row && { ...row, live_enrolments: Number(row.live_enrolments) };
  },

  /**
   * What a create checks before it writes, in one query: the course it names (if there) and whether the
   * extension of its type is switched off.
   */
  async courseAndSwitch(db: Db, organisationId: string, courseId: string, extension: string): Promise<{ course?: { id: string; deleted_at: string | null }; extensionDisabled: boolean }> {
    const { rows } = await sql<{ id: string | null; deleted_at: string | null; disabled: boolean | number }>`select c.id, c.deleted_at, ${extensionsRepository.isDisabledSql(organisationId, extension)} as disabled
      from (select 1 as one) as named left join courses c on c.organisation_id = ${organisationId} and c.id = ${courseId}`.execute(db);
    const [r] = rows;
    return { course: r.id === null ? undefined : { id: r.id, deleted_at: r.deleted_at }, extensionDisabled: Boolean(r.disabled) };
  },

  /**
   * PostgreSQL, as a final statement (db/final-statement.ts): a create, `row` as the service made it, and its
   * event `{"id","course_id","summary"}`, worded as the service words it. The premises: the course live and
   * `extension` (its type's) not switched off (otherwise the full path's 422 or 409); its external id taken makes
   * nothing either.
   */
  createInOneStatement(db: Db, row: EnrolmentMethodRow, extension: string): Promise<EnrolmentMethodRow> {
    const org = row.organisation_id;
    return insertInOneStatement<EnrolmentMethodRow>(
      db,
      'enrolment_methods',
      row,
      { type: 'enrolment_method.created', occurredAt: row.created_at, members: [['course_id', sql`u.course_id`], ['summary', sql`'Enrolment method ' || ${labelSql} || ' added.'`]] },
      {
        premises: [
          liveRowSql('courses', org, row.course_id),
          sql<boolean>`not ${extensionsRepository.isDisabledSql(org, extension)}`,
        ],
      },
    );
  },

  async insertEnrolment(db: Db, row: EnrolmentsTable): Promise<void> {
    await db.insertInto('enrolments').values(row).execute();
  },

  /**
   * PostgreSQL, as a final statement (db/final-statement.ts): the PATCH of a live method and its event
   * `{"id","course_id","summary"}`, worded as the service words it. `typesTakingSettings`, with settings asked:
   * the types those settings suit (a method of another type is the full path's 422).
   */
  updateInOneStatement(db: Db, organisationId: string, id: string, changes: MethodChanges, typesTakingSettings: string[] | undefined, at: string): Promise<EnrolmentMethodRow> {
    const asked: ColumnChange[] = UPDATABLE.filter((column) => changes[column] !== undefined).map((column) => [column, sql`${changes[column]}::text`]);
    const premises: RawBuilder<boolean>[] = [];
    if (typesTakingSettings !== undefined) premises.push(typesTakingSettings.length === 0 ? sql<boolean>`false` : sql<boolean>`b.type in (${sql.join(typesTakingSettings)})`);
    return updateLiveInOneStatement<EnrolmentMethodRow>(
      db,
      'enrolment_methods',
      organisationId,
      id,
      asked,
      {
        type: 'enrolment_method.updated',
        occurredAt: at,
        members: [['course_id', sql`u.course_id`], ['summary', sql`'Enrolment method ' || ${labelSql} || ' changed: ' || ${changedColumnsSql(UPDATABLE)} || '.'`]],
      },
      { premises },
    );
  },

  /**
   * PostgreSQL, as a final statement: the soft delete of a method through which no live enrolment was made
   * (one that has some is the full path's 409, or its `unenrol`), with its tombstone and event.
   */
  deleteUnusedInOneStatement(db: Db, organisationId: string, id: string, at: string): Promise<void> {
    return deletionsRepository.softDeleteInOneStatement(
      db,
      'enrolment_methods',
      'enrolment_method',
      organisationId,
      id,
      { type: 'enrolment_method.deleted', occurredAt: at, members: [['course_id', sql`u.course_id`], ['summary', sql`'Enrolment method ' || ${labelSql} || ' deleted.'`]] },
      { premises: [sql`not exists (select 1 from enrolments where enrolments.organisation_id = ${organisationId} and enrolments.enrolment_method_id = ${id} and enrolments.deleted_at is null)`] },
    );
  },
};
