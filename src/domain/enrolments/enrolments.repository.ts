import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { EnrolmentsTable } from '../../db/tables.ts';
import { tenantRows } from '../../db/tenant-rows.ts';
import { preparedQuery } from '../../db/prepared.ts';
import { eventOfChangedRow, orderedIds } from '../../events/outbox.ts';
import { isPostgres } from '../../db/column-types.ts';
import { deferredWrite, type FailureTranslation } from '../../db/deferred-writes.ts';
import { changedColumnsSql, insertInOneStatement, updateLiveInOneStatement, type ColumnChange, type NamedStatement, liveRowSql } from '../one-statement-update.repository.ts';
import { deletionsRepository } from '../deletions/deletions.repository.ts';

export type EnrolmentRow = Selectable<EnrolmentsTable>;
/** What ending an enrolment needs to say: its tombstone and its event. */
export type EndedEnrolment = Pick<EnrolmentRow, 'id' | 'external_id' | 'course_id' | 'person_id'>;
export type EndedBy = { course_id: string } | { person_id: string } | { enrolment_method_id: string };
/** What a create names, read at once: the course, the person and the method (each if there), and whether that person is enrolled through that method. */
export interface NamedInCreate {
  course?: { id: string; deleted_at: string | null };
  person?: { id: string; deleted_at: string | null };
  method?: { id: string; course_id: string; status: 'enabled' | 'disabled'; role: string; deleted_at: string | null };
  enrolled: boolean;
}

/** What a PATCH asks of an enrolment, its dates as ISO instants. */
export type EnrolmentChanges = Partial<Pick<EnrolmentRow, 'role' | 'status' | 'starts_at' | 'ends_at'>>;

// The order in which the service lists what changed.
const UPDATABLE = ['role', 'status', 'starts_at', 'ends_at'] as const;
const DATES = new Set<string>(['starts_at', 'ends_at']);

/** Why enrolments end with what they belong to, as their `enrolment.deleted` events say. */
export const endedBecause = {
  course_id: 'the course was deleted',
  person_id: 'the user was deleted',
  enrolment_method_id: 'its enrolment method was deleted',
} as const;

const insertRow = preparedQuery(
  (db: Db, ...v: [string, string, string, string, string, string | null, string, string, string | null, string | null, string, string]) =>
    db.insertInto('enrolments').values({
      id: v[0],
      organisation_id: v[1],
      enrolment_method_id: v[2],
      course_id: v[3],
      person_id: v[4],
      external_id: v[5],
      role: v[6] as EnrolmentRow['role'],
      status: v[7] as EnrolmentRow['status'],
      starts_at: v[8],
      ends_at: v[9],
      created_at: v[10],
      updated_at: v[11],
      deleted_at: null,
    }),
);

// A bulk request looks up what its operations name in one query per kind (at most 500 ids: within every
// engine's limit on parameters), rather than one query per operation.
// Of a person, only what an enrolment asks (whether they are there and not removed), as `person` reads it.
const byIdsIn = (db: Db, table: 'courses' | 'people' | 'enrolment_methods' | 'enrolments', organisationId: string, ids: string[]) => {
  if (ids.length === 0) return Promise.resolve([]);
  if (table === 'people') return db.selectFrom('people').select(['id', 'deleted_at']).where('organisation_id', '=', organisationId).where('id', 'in', ids).execute() as Promise<any[]>;
  return db.selectFrom(table as 'courses').selectAll().where('organisation_id', '=', organisationId).where('id', 'in', ids).execute() as Promise<any[]>;
};

export const enrolmentsRepository = {
  ...tenantRows('enrolments'),

  /**
   * A deferred write (db/deferred-writes.ts): on PostgreSQL it rides with the transaction's next statement, and
   * its failure (a unique key taken) surfaces there as `onFailure` translates it.
   */
  async insertRow(db: Db, r: EnrolmentRow, onFailure: FailureTranslation): Promise<void> {
    const args = [r.id, r.organisation_id, r.enrolment_method_id, r.course_id, r.person_id, r.external_id, r.role, r.status, r.starts_at, r.ends_at, r.created_at, r.updated_at] as const;
    await deferredWrite(db, { compile: () => insertRow.compile(db, ...args) }, onFailure);
  },

  /** NamedInCreate, in one query: what a create checks before it writes, at the cost of one round trip. */
  async namedInCreate(db: Db, organisationId: string, courseId: string, personId: string, methodId: string): Promise<NamedInCreate> {
    const { rows } = await sql<{
      course_id: string | null;
      course_deleted_at: string | null;
      person_id: string | null;
      person_deleted_at: string | null;
      method_id: string | null;
      method_course_id: string;
      method_status: 'enabled' | 'disabled';
      method_role: string;
      method_deleted_at: string | null;
      enrolled: boolean | number;
    }>`select c.id as course_id, c.deleted_at as course_deleted_at, p.id as person_id, p.deleted_at as person_deleted_at,
        m.id as method_id, m.course_id as method_course_id, m.status as method_status, m.role as method_role, m.deleted_at as method_deleted_at,
        exists (select 1 from enrolments e where e.organisation_id = ${organisationId} and e.enrolment_method_id = ${methodId} and e.person_id = ${personId} and e.deleted_at is null) as enrolled
      from (select 1 as one) as named
      left join courses c on c.organisation_id = ${organisationId} and c.id = ${courseId}
      left join people p on p.organisation_id = ${organisationId} and p.id = ${personId}
      left join enrolment_methods m on m.organisation_id = ${organisationId} and m.id = ${methodId}`.execute(db);
    const r = rows[0];
    return {
      course: r.course_id === null ? undefined : { id: r.course_id, deleted_at: r.course_deleted_at },
      person: r.person_id === null ? undefined : { id: r.person_id, deleted_at: r.person_deleted_at },
      method: r.method_id === null ? undefined : { id: r.method_id, course_id: r.method_course_id, status: r.method_status, role: r.method_role, deleted_at: r.method_deleted_at },
      enrolled: Boolean(r.enrolled),
    };
  },

  /**
   * An enrolment read to be changed in this transaction: on PostgreSQL its row is locked (FOR UPDATE), so that
   * nothing else changes or ends it before the change, which may then be a deferred write that nobody waits on.
   * SQLite has one writer at a time: the transaction's read is already as good.
   */
  findByIdToChange(db: Db, organisationId: string, id: string): Promise<EnrolmentRow | undefined> {
    const query = db.selectFrom('enrolments').selectAll().where('organisation_id', '=', organisationId).where('id', '=', id);
    return (isPostgres(db) ? query.forUpdate() : query).executeTakeFirst();
  },

  /** A person of the organisation, removed or not (a removed one is a deleted user: 409, not 422). */
  person(db: Db, organisationId: string, id: string) {
    return db.selectFrom('people').select(['id', 'deleted_at']).where('organisation_id', '=', organisationId).where('id', '=', id).executeTakeFirst();
  },

  /** The live enrolment of a person through a method, if any. */
  livePair(db: Db, organisationId: string, methodId: string, personId: string) {
    return db
      .selectFrom('enrolments')
      .selectAll()
      .where('organisation_id', '=', organisationId)
      .where('enrolment_method_id', '=', methodId)
      .where('person_id', '=', personId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
  },

  byIds: byIdsIn,

  byExternalIds(db: Db, organisationId: string, externalIds: string[]): Promise<EnrolmentRow[]> {
    if (externalIds.length === 0) return Promise.resolve([]);
    return db.selectFrom('enrolments').selectAll().where('organisation_id', '=', organisationId).where('external_id', 'in', externalIds).execute();
  },

  /**
   * The live enrolments of these people through these methods: every live pair among the (method, person)
   * pairs asked about, and maybe others of the same people and methods. One statement that reads the live-pair
   * unique index by both lists (a list of row values, `(method, person) IN ((…), …)`, is planned as a scan on
   * PostgreSQL: 50-180 ms for 500 pairs).
   */
  livePairs(db: Db, organisationId: string, pairs: Array<[methodId: string, personId: string]>) {
    if (pairs.length === 0) return Promise.resolve([]);
    return db
      .selectFrom('enrolments')
      .select(['enrolment_method_id', 'person_id'])
      .where('organisation_id', '=', organisationId)
      .where('enrolment_method_id', 'in', [...new Set(pairs.map(([m]) => m))])
      .where('person_id', 'in', [...new Set(pairs.map(([, p]) => p))])
      .where('deleted_at', 'is', null)
      .execute();
  },

  /** Changes a live enrolment; undefined when it is not live any more. */
  async updateLive(db: Db, organisationId: string, id: string, patch: Partial<EnrolmentRow>): Promise<EnrolmentRow | undefined> {
    return db.updateTable('enrolments').set(patch).where('organisation_id', '=', organisationId).where('id', '=', id).where('deleted_at', 'is', null).returningAll().executeTakeFirst();
  },

  /**
   * PostgreSQL, as a final statement (db/final-statement.ts): a create, `row` as the service made it but for its
   * role when none was asked (null: its method's), and its event `{"id","course_id","user_id","summary"}`, worded as
   * the service words it. The premises: the course and the person live, the method live, enabled and the course's
   * (otherwise the full path's 422 or 409); an enrolment of the person through the method already live, or the
   * external id taken, is a unique key taken: nothing is made either.
   */
  createInOneStatement(db: Db, row: Omit<EnrolmentRow, 'role'> & { role: EnrolmentRow['role'] | null }): Promise<EnrolmentRow> {
    const org = row.organisation_id;
    const method = sql`enrolment_methods m where m.organisation_id = ${org} and m.id = ${row.enrolment_method_id}`;
    return insertInOneStatement<EnrolmentRow>(
      db,
      'enrolments',
      row,
      {
        type: 'enrolment.created',
        occurredAt: row.created_at,
        members: [['course_id', sql`u.course_id`], ['user_id', sql`u.person_id`], ['summary', sql`'User enrolled as ' || u.role || case when u.status = 'suspended' then ' (suspended)' else '' end || '.'`]],
      },
      {
        computed: [['role', sql`coalesce(r.role, (select m.role from ${method}))`]],
        premises: [
          liveRowSql('courses', org, row.course_id),
          sql<boolean>`exists(select 1 from people p where p.organisation_id = ${org} and p.id = ${row.person_id} and p.deleted_at is null)`,
          sql<boolean>`exists(select 1 from ${method} and m.course_id = ${row.course_id} and m.status = 'enabled' and m.deleted_at is null)`,
        ],
      },
    );
  },

  /**
   * PostgreSQL, as a final statement (db/final-statement.ts): the PATCH of a live enrolment and its event
   * `{"id","course_id","user_id","summary"}`, worded as the service words it. The premise: the dates it would have
   * are in order (otherwise the full path's 422).
   */
  updateInOneStatement(db: Db, organisationId: string, id: string, changes: EnrolmentChanges, at: string): Promise<EnrolmentRow> {
    const value = (column: (typeof UPDATABLE)[number]) => sql`${changes[column]}::${sql.raw(DATES.has(column) ? 'timestamptz' : 'text')}`;
    const asked: ColumnChange[] = UPDATABLE.filter((column) => changes[column] !== undefined).map((column) => [column, value(column)]);
    const after = (column: 'starts_at' | 'ends_at'): RawBuilder<unknown> => (changes[column] !== undefined ? value(column) : sql.ref(`b.${column}`));
    const datesInOrder = sql<boolean>`not (${after('starts_at')} is not null and ${after('ends_at')} is not null and ${after('ends_at')} < ${after('starts_at')})`;
    return updateLiveInOneStatement<EnrolmentRow>(
      db,
      'enrolments',
      organisationId,
      id,
      asked,
      {
        type: 'enrolment.updated',
        occurredAt: at,
        members: [['course_id', sql`u.course_id`], ['user_id', sql`u.person_id`], ['summary', sql`'Enrolment changed: ' || ${changedColumnsSql(UPDATABLE)} || '.'`]],
      },
      { premises: [datesInOrder] },
    );
  },

  /** PostgreSQL, as a final statement: a live enrolment ended (soft deleted), with its tombstone and event. */
  deleteInOneStatement(db: Db, organisationId: string, id: string, at: string): Promise<void> {
    return deletionsRepository.softDeleteInOneStatement(db, 'enrolments', 'enrolment', organisationId, id, {
      type: 'enrolment.deleted',
      occurredAt: at,
      members: [['course_id', sql`u.course_id`], ['user_id', sql`u.person_id`], ['summary', sql`'Enrolment ended.'`]],
    });
  },

  /** Ends every live enrolment of a course, a person or a method in one statement; returns those it ended. */
  endAll(db: Db, organisationId: string, by: EndedBy, at: string): Promise<EndedEnrolment[]> {
    const [column, value] = Object.entries(by)[0] as [keyof EndedBy & string, string];
    return db
      .updateTable('enrolments')
      .set({ deleted_at: at, updated_at: at })
      .where('organisation_id', '=', organisationId)
      .where(column as 'course_id', '=', value)
      .where('deleted_at', 'is', null)
      .returning(['id', 'external_id', 'course_id', 'person_id'])
      .execute();
  },

  /**
   * PostgreSQL, in a one-statement delete (deletions.repository.ts): endAll of the rows `owners` names (a
   * subquery over the deleted row, `select id from u`), with each enrolment's tombstone and `enrolment.deleted`
   * event, as the service writes them: tombstones first, then events, each in the enrolments' order, their ids
   * after every id made before this call (orderedIds). The CTE `ended` holds the enrolments ended.
   */
  endAllInStatement(organisationId: string, column: keyof typeof endedBecause, owners: RawBuilder<unknown>, at: string): NamedStatement[] {
    const tombstoneIds = orderedIds();
    const eventIds = orderedIds();
    const event = { type: 'enrolment.deleted' as const, occurredAt: at, members: [['course_id', sql`u.course_id`], ['user_id', sql`u.person_id`], ['summary', sql`${`Enrolment ended: ${endedBecause[column]}.`}::text`]] as Array<[string, RawBuilder<unknown>]> };
    return [
      ['ended', sql`update enrolments set deleted_at = ${at}::timestamptz, updated_at = ${at}::timestamptz
        where organisation_id = ${organisationId} and ${sql.ref(column)} in (${owners}) and deleted_at is null
        returning id, external_id, course_id, person_id`],
      ['ended_in_order', sql`select ended.*, row_number() over (order by ended.id) as n from ended`],
      ['ended_tombstones', sql`insert into deletions (id, organisation_id, resource_type, resource_id, external_id, deleted_at)
        select ${tombstoneIds(sql`u.n`)}, ${organisationId}::uuid, 'enrolment', u.id, u.external_id, ${at}::timestamptz from ended_in_order u`],
      ['ended_events', eventOfChangedRow(organisationId, event, sql`ended_in_order u`, eventIds(sql`u.n`))],
    ];
  },
};
