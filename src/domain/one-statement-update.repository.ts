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

/**
 * A column and the typed value asked for it, e.g. `['title', sql\`${title}::text\`]`. The value may read the row's
 * columns as they were (`case when url is distinct from … then … else verified_at end`).
 */
export type ColumnChange = readonly [column: string, value: RawBuilder<unknown>];

export interface OneStatementUpdateOptions {
  /**
   * Conditions on the row (its columns unqualified) besides being live, e.g. "its type takes these settings":
   * what the full path refuses with a 409 or a 422. One not met changes no row, so the statement is refused and
   * the full path answers the refusal.
   */
  premises?: readonly RawBuilder<unknown>[];
}

/**
 * For an event's member: the names of those of `columns` that the change made differ, joined by `, ` in the
 * order given, as a service lists what it changed (`b` is the row before the change, read in the statement's
 * snapshot; `u` the row after it).
 */
export function changedColumnNames(columns: readonly string[]): RawBuilder<string> {
  const named = columns.map((column) => sql`case when b.${sql.ref(column)} is distinct from u.${sql.ref(column)} then ${column}::text end`);
  return sql<string>`(select concat_ws(', ', ${sql.join(named)}) from b)`;
}

/**
 * Sets `changes` (and updated_at = the event's time) on the live row `id` of `table` where at least one of them
 * differs and every premise holds, records `event` of the changed row (its members may read `u.<column>`, and
 * `changedColumnNames`), and returns the row as changed.
 */
export async function updateLiveInOneStatement<Row>(
  db: Db,
  table: TenantTableName,
  organisationId: string,
  id: string,
  changes: readonly ColumnChange[],
  event: RowEvent,
  options: OneStatementUpdateOptions = {},
): Promise<Row> {
  if (changes.length === 0) throw new Error('updateLiveInOneStatement: nothing to change');
  const set = sql.join(changes.map(([column, value]) => sql`${sql.ref(column)} = ${value}`));
  const differs = sql.join(
    changes.map(([column, value]) => sql`${sql.ref(column)} is distinct from ${value}`),
    sql` or `,
  );
  const premises = (options.premises ?? []).map((premise) => sql` and (${premise})`);
  // `b` is planned only where an event member reads it (changedColumnNames).
  const query = sql<Row>`with b as (
      select * from ${sql.table(table)} where organisation_id = ${organisationId} and id = ${id}
    ), u as (
      update ${sql.table(table)} set ${set}, updated_at = ${event.occurredAt}::timestamptz
      where organisation_id = ${organisationId} and id = ${id} and deleted_at is null and (${differs})${sql.join(premises, sql``)}
      returning *
    ), e as (${eventOfChangedRow(organisationId, event)})
    select u.* from (select atrium_require(exists(select 1 from u), ${`${table} row changed`}::text) as held) as premise left join u on true where premise.held`.compile(db);
  const { rows } = await runFinalStatement(db, query);
  return rows[0];
}
