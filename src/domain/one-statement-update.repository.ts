// PostgreSQL: a PATCH by id, or a create, in one statement, sent as its transaction's final one
// (db/final-statement.ts). The UPDATE of a live row, only where some asked value really differs, and the event of
// the row it changed, in one `WITH u AS (UPDATE … RETURNING *)` statement that fails (atrium_require) when it
// changed no row: absent, deleted, already so, or a premise of the change not holding. A create likewise, `WITH u AS
// (INSERT … SELECT … WHERE <premises> ON CONFLICT DO NOTHING RETURNING *)`, fails when it made no row. Refused,
// the request runs again on its full path, which tells 404 from 409 from 422 from "nothing to change" (and
// answers the row as it is, with no event).
import { sql, type CompiledQuery, type RawBuilder } from 'kysely';
import type { Db } from '../db/database.ts';
import type { Tables } from '../db/tables.ts';
import { runFinalStatement } from '../db/final-statement.ts';
import { eventOfChangedRow, type RowEvent } from '../events/outbox.ts';
import { compileByShape } from '../db/statement-shapes.ts';
import { newId } from '../ids.ts';
import { asPromise } from '../maybe-async.ts';

/** A table of organisations' rows, each with an id and an updated_at (and a deleted_at, where soft-deleted). */
export type UpdatableTableName = { [K in keyof Tables]: Tables[K] extends { organisation_id: string; id: string; updated_at: string } ? K : never }[keyof Tables];

/** A table of organisations' rows, each with an id (a file's, which never changes, has no updated_at). */
export type CreatableTableName = { [K in keyof Tables]: Tables[K] extends { organisation_id: string; id: string } ? K : never }[keyof Tables];

/**
 * A column and the typed value asked for it, e.g. `['title', sql\`${title}::text\`]`; with `differs`, what tells
 * that the value asked is a change (over the row before it, `b`; e.g. a set compared without its order): where
 * it does not, the column keeps its value, even when another column changes.
 */
export type ColumnChange = readonly [column: string, value: RawBuilder<unknown>, differs?: RawBuilder<boolean>];

export interface OneStatementUpdateOptions {
  /** The column naming the row, when not `id` (a role's `key`). */
  identity?: string;
  /** False for a table without soft deletes (no `deleted_at`). */
  softDeleted?: boolean;
  /**
   * Conditions that must hold for the change to be made, over the row before it (`b`) or any table (a referenced
   * row still live, an address still free): where one does not, nothing changes and the request takes its full
   * path, which answers the refusal.
   */
  premises?: RawBuilder<boolean>[];
  /** Further writes of the change (an epoch's bump), as named CTEs that may read the changed row `u` and the row before it `b`. */
  effects?: readonly NamedStatement[];
  /** Columns set with any change but not asked (a wiki page's next version, its author): SQL over the row before it (`b`). */
  alsoSet?: ReadonlyArray<readonly [column: string, value: RawBuilder<unknown>]>;
  /** More columns of the answer beside the changed row's, SQL over it (`u`; an activity's settings). */
  answer?: ReadonlyArray<readonly [name: string, value: RawBuilder<unknown>]>;
}

/** A CTE of a one-statement write: its name, and its statement, which may read the CTEs named before it. */
export type NamedStatement = readonly [name: string, statement: RawBuilder<unknown>];

/**
 * `sql.ref(name)` and `sql.table(name)`, made once per name: Kysely parses the name each time it makes one, and
 * the builders are immutable, so the names this module uses (tables and columns, from code) are parsed once, not
 * on every request (the parsing was an eighth of building a PATCH's statement: bench/README.md). Bounded all the
 * same: past MAX_NAMES, a name is parsed each time, as before.
 */
const MAX_NAMES = 2_000;
function madeOnce(make: (name: string) => RawBuilder<unknown>): (name: string) => RawBuilder<unknown> {
  const made = new Map<string, RawBuilder<unknown>>();
  return (name) => {
    let builder = made.get(name);
    if (builder === undefined) {
      builder = make(name);
      if (made.size < MAX_NAMES) made.set(name, builder);
    }
    return builder;
  };
}
const refOf = madeOnce((name) => sql.ref(name));
const tableOf = madeOnce((name) => sql.table(name));

/** `, name as (statement)` for each: CTEs after the change's own, before its event (which may read them). */
export const namedStatementsSql = (statements: readonly NamedStatement[]) => sql.join(statements.map(([name, statement]) => sql`, ${sql.id(name)} as (${statement})`), sql``);

/** ` and <premise> and …` for a WHERE clause, or nothing when there are none. */
export const andPremisesSql = (premises: readonly RawBuilder<boolean>[]) => (premises.length === 0 ? sql`` : sql` and ${sql.join(premises, sql` and `)}`);

/** A premise: the organisation's row `id` of `table` is there and not deleted (a course a new row names, say). */
export const liveRowSql = (table: 'courses', organisationId: string, id: string): RawBuilder<boolean> =>
  sql<boolean>`exists(select 1 from ${tableOf(table)} x where x.organisation_id = ${organisationId} and x.id = ${id} and x.deleted_at is null)`;

/**
 * `case when <column> changed then '<column>' end` for each column, joined with `, `: the columns the statement
 * changed, named in the order given, for an event's summary (`u` the changed row, `b` the row before it).
 */
export function changedColumnsSql(columns: readonly string[], separator = ', '): RawBuilder<string> {
  const named = columns.map((c) => sql`case when ${refOf(`u.${c}`)} is distinct from ${refOf(`b.${c}`)} then ${c}::text end`);
  return sql<string>`concat_ws(${separator}::text, ${sql.join(named)})`;
}

/**
 * Sets `changes` (and updated_at = the event's time) on the live row `id` of `table` where at least one of them
 * differs and every premise holds, records `event` of the changed row (its members may read `u.<column>`, the
 * row as changed, and `b.<column>`, the row before), makes the `effects`, and returns the row as changed.
 */
export function updateLiveInOneStatement<Row>(
  db: Db,
  table: UpdatableTableName,
  organisationId: string,
  id: string,
  changes: readonly ColumnChange[],
  event: RowEvent,
  options: OneStatementUpdateOptions = {},
): Promise<Row> {
  // Not an async function, one promise fewer on every PATCH: a failure before the statement goes is a rejection all the same.
  return asPromise(() => runFinalStatement(db, updateStatement<Row>(db, table, organisationId, id, changes, event, options))).then(firstRow);
}

const firstRow = <Row>({ rows }: { rows: Row[] }): Row => rows[0];

/** updateLiveInOneStatement's statement. */
function updateStatement<Row>(db: Db, table: UpdatableTableName, organisationId: string, id: string, changes: readonly ColumnChange[], event: RowEvent, options: OneStatementUpdateOptions): CompiledQuery<Row> {
  if (changes.length === 0) throw new Error('updateLiveInOneStatement: nothing to change');
  const { identity = 'id', softDeleted = true, premises = [], effects = [], alsoSet = [], answer = [] } = options;
  // Compiled once per shape (db/statement-shapes.ts): the key names everything but the values and the parts.
  const key = ['update', table, identity, softDeleted, changes.map(([column, , custom]) => (custom ? `${column}~` : column)), alsoSet.map(([column]) => column), premises.length, effects.map(([name]) => name), answer.map(([name]) => name), event.members.map(([name]) => name)];
  const parts = [
    ...changes.flatMap(([, value, custom]) => (custom ? [value, custom] : [value])),
    ...alsoSet.map(([, value]) => value),
    ...premises,
    ...effects.map(([, statement]) => statement),
    ...answer.map(([, value]) => value),
    ...event.members.map(([, value]) => value),
  ];
  return compileByShape<Row>(db, key, [organisationId, id, event.type, event.occurredAt, newId()], parts, (value, part) => {
    let p = 0;
    const asked = changes.map(([column, , custom]): ColumnChange => (custom ? [column, part(p++), part(p++) as RawBuilder<boolean>] : [column, part(p++)]));
    const extra = alsoSet.map(([column]) => [column, part(p++)] as const);
    const held = andPremisesSql(premises.map(() => part(p++) as RawBuilder<boolean>));
    const named = effects.map(([name]): NamedStatement => [name, part(p++)]);
    const answered = answer.map(([name]) => [name, part(p++)] as const);
    const members = event.members.map(([name]): [string, RawBuilder<unknown>] => [name, part(p++)]);
    const occurredAt = value(3) as string;
    // The table's own column, not the row before's (`b` has the same columns).
    const own = (column: string) => refOf(`${table}.${column}`);
    const differs = (column: string, v: RawBuilder<unknown>, custom?: RawBuilder<boolean>) => custom ?? sql<boolean>`${own(column)} is distinct from ${v}`;
    const set = sql.join([
      ...asked.map(([column, v, custom]) => (custom ? sql`${refOf(column)} = case when ${custom} then ${v} else ${own(column)} end` : sql`${refOf(column)} = ${v}`)),
      ...extra.map(([column, v]) => sql`${refOf(column)} = ${v}`),
    ]);
    const anyDiffers = sql.join(
      asked.map(([column, v, custom]) => differs(column, v, custom)),
      sql` or `,
    );
    const live = softDeleted ? sql` and deleted_at is null` : sql``;
    // `b` is the row as it is, locked, so that the row before and the row changed are one row's two states.
    return sql<Row>`with b as (
      select * from ${tableOf(table)} where organisation_id = ${value(0)} and ${refOf(identity)} = ${value(1)}${live} for update
    ), u as (
      update ${tableOf(table)} set ${set}, updated_at = ${occurredAt}::timestamptz
      from b where ${own('id')} = b.id and (${anyDiffers})${held}
      returning ${tableOf(table)}.*
    )${namedStatementsSql(named)}, e as (${eventOfChangedRow(value(0) as string, { type: value(2) as RowEvent['type'], occurredAt, members }, sql`u cross join b`, sql`${value(4)}::uuid`)})
    ${rowOfU(`${table} row changed`, answered)}`;
  });
}

/**
 * The one-statement write's row `u` (with the `answer` columns, SQL over it), or a failure (atrium_require, saying
 * `what` did not happen) when there is none.
 */
const rowOfU = (what: string, answer: OneStatementUpdateOptions['answer'] = []) =>
  sql`select u.*${sql.join(answer.map(([name, value]) => sql`, ${value} as ${refOf(name)}`), sql``)} from (select atrium_require(exists(select 1 from u), ${what}::text) as held) as premise left join u on true where premise.held`;

export interface OneStatementInsertOptions {
  /**
   * Columns whose value the database decides (an enrolment's role, its method's unless asked): SQL over the row
   * asked, `r` (its columns as given, typed as the table's), in place of the value given.
   */
  computed?: ReadonlyArray<readonly [column: string, value: RawBuilder<unknown>]>;
  /**
   * Conditions that must hold for the row to be made (what it names is there, live, switched on): where one does
   * not, nothing is made and the request takes its full path, which answers the refusal.
   */
  premises?: RawBuilder<boolean>[];
  /** Further rows the create makes with its row (a wiki activity's wiki), as named CTEs that read the row made, `u`. */
  effects?: readonly NamedStatement[];
  /**
   * What the row's computed values, premises and effects read, read once, as named CTEs before the insert (a new
   * wiki page's activity, wiki and owner).
   */
  given?: readonly NamedStatement[];
}

/**
 * PostgreSQL: a create in one statement, sent as its transaction's final one (db/final-statement.ts). `row`, as
 * the service made it (every column, its values computed in JavaScript), inserted where every premise holds and no
 * unique key of the table is taken (`on conflict do nothing`), with `event` of the row made (its members read the
 * row as made, `u`); a row not made refuses the statement, so that the request runs again on its full path, which
 * tells 404 from 409 from 422. The `effects` make the create's other rows, only with its own. Returns the row as made.
 */
export async function insertInOneStatement<Row>(db: Db, table: CreatableTableName, row: Readonly<Record<string, unknown>> & { organisation_id: string; id: string }, event: RowEvent, options: OneStatementInsertOptions = {}): Promise<Row> {
  const { computed = [], premises = [], effects = [], given = [] } = options;
  const columns = Object.keys(row);
  // Compiled once per shape (db/statement-shapes.ts): the key names everything but the values and the parts.
  const key = ['insert', table, columns, computed.map(([column]) => column), premises.length, effects.map(([name]) => name), given.map(([name]) => name), event.members.map(([name]) => name)];
  const parts = [...given.map(([, statement]) => statement), ...computed.map(([, value]) => value), ...premises, ...effects.map(([, statement]) => statement), ...event.members.map(([, value]) => value)];
  // The values travel as one JSON object, typed by the table's own row type: no cast to spell per column.
  const values = [JSON.stringify(row), row.organisation_id, event.type, event.occurredAt, newId()];
  const query = compileByShape<Row>(db, key, values, parts, (value, part) => {
    let p = 0;
    const read = given.map(([name]): NamedStatement => [name, part(p++)]);
    const computedOf = new Map(computed.map(([column]) => [column, part(p++)]));
    const held = sql`true${andPremisesSql(premises.map(() => part(p++) as RawBuilder<boolean>))}`;
    const named = effects.map(([name]): NamedStatement => [name, part(p++)]);
    const members = event.members.map(([name]): [string, RawBuilder<unknown>] => [name, part(p++)]);
    const made = columns.map((column) => computedOf.get(column) ?? refOf(`r.${column}`));
    return sql<Row>`with ${sql.join(read.map(([name, statement]) => sql`${sql.id(name)} as (${statement}), `), sql``)}u as (
      insert into ${tableOf(table)} (${sql.join(columns.map((column) => sql.id(column)))})
      select ${sql.join(made)} from json_populate_record(null::${tableOf(table)}, ${value(0)}::json) as r
      where ${held}
      on conflict do nothing
      returning *
    )${namedStatementsSql(named)}, e as (${eventOfChangedRow(value(1) as string, { type: value(2) as RowEvent['type'], occurredAt: value(3) as string, members }, sql`u`, sql`${value(4)}::uuid`)})
    ${rowOfU(`${table} row made`)}`;
  });
  const { rows } = await runFinalStatement(db, query, row.id);
  return rows[0];
}
