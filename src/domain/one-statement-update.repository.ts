// PostgreSQL: a PATCH by id in one statement, sent as its transaction's final one (db/final-statement.ts). The
// UPDATE of a live row, only where some asked value really differs, and the event of the row it changed, in one
// `WITH u AS (UPDATE … RETURNING *)` statement that fails (atrium_require) when it changed no row: absent,
// deleted, already so, or a premise of the area's not met. Refused, the request runs again on its full path,
// which tells 404 from 409 from 422 from "nothing to change" (and answers the row as it is, with no event).
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/database.ts';
import type { TenantTableName } from '../db/tenant-rows.ts';
import { runFinalStatement } from '../db/final-statement.ts';
import { eventOfChangedRow, type RowEvent } from '../events/outbox.ts';

/** A column and the typed value asked for it, e.g. `['title', sql\`${title}::text\`]`. */
export type ColumnChange = readonly [column: string, value: RawBuilder<unknown>];

/** What an area adds to the plain PATCH (each optional). */
export interface OneStatementExtras {
  /**
   * Conditions the row must meet besides being live, SQL over the row as `t` (its activity live, a section of
   * its course): unmet, nothing changes and the full path says why.
   */
  premises?: RawBuilder<unknown>[];
  /** Set too, but not asked: they change with any change (a version number, its author), SQL over `t`. */
  alsoSet?: readonly ColumnChange[];
  /** Columns whose values before the change the event reads, as `u.was_<column>` (what the summary says changed). */
  before?: readonly string[];
  /** More data-modifying CTEs over the changed row `u` (a wiki page's version row). */
  alongside?: RawBuilder<unknown>[];
  /** More columns of the answer, SQL over the changed row `u` (an activity's settings). */
  answer?: ReadonlyArray<readonly [name: string, value: RawBuilder<unknown>]>;
}

/**
 * Sets `changes` (and updated_at = the event's time) on the live row `id` of `table` where at least one of them
 * differs, records `event` of the changed row (its members may read `u.<column>`), and returns the row as changed.
 */
export async function updateLiveInOneStatement<Row>(
  db: Db,
  table: TenantTableName,
  organisationId: string,
  id: string,
  changes: readonly ColumnChange[],
  event: RowEvent,
  extras: OneStatementExtras = {},
): Promise<Row> {
  if (changes.length === 0) throw new Error('updateLiveInOneStatement: nothing to change');
  const set = sql.join([...changes, ...(extras.alsoSet ?? [])].map(([column, value]) => sql`${sql.ref(column)} = ${value}`));
  const differs = sql.join(
    changes.map(([column, value]) => sql`${sql.ref(`t.${column}`)} is distinct from ${value}`),
    sql` or `,
  );
  const premises = (extras.premises ?? []).map((premise) => sql` and (${premise})`);
  const before = extras.before ?? [];
  // The row as it was: the same row read again in FROM, whose columns RETURNING may show beside the new ones.
  const was = before.length === 0 ? sql`` : sql` from ${sql.table(table)} as o`;
  const wasRow = before.length === 0 ? sql`` : sql` and o.organisation_id = t.organisation_id and o.id = t.id`;
  const wasColumns = before.map((column) => sql`, ${sql.ref(`o.${column}`)} as ${sql.ref(`was_${column}`)}`);
  const alongside = (extras.alongside ?? []).map((cte, i) => sql`, ${sql.ref(`a${i}`)} as (${cte})`);
  const answer = (extras.answer ?? []).map(([name, value]) => sql`, ${value} as ${sql.ref(name)}`);
  const query = sql<Row>`with u as (
      update ${sql.table(table)} as t set ${set}, updated_at = ${event.occurredAt}::timestamptz${was}
      where t.organisation_id = ${organisationId} and t.id = ${id} and t.deleted_at is null and (${differs})${sql.join(premises, sql``)}${wasRow}
      returning t.*${sql.join(wasColumns, sql``)}
    ), e as (${eventOfChangedRow(organisationId, event)})${sql.join(alongside, sql``)}
    select u.*${sql.join(answer, sql``)} from (select atrium_require(exists(select 1 from u), ${`${table} row changed`}::text) as held) as premise left join u on true where premise.held`.compile(db);
  const { rows } = await runFinalStatement(db, query);
  return rows[0];
}
