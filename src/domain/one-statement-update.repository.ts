// PostgreSQL: a PATCH by id in one statement, sent as its transaction's final one (db/final-statement.ts). The
// UPDATE of a live row, only where some asked value really differs, and the event of the row it changed, in one
// `WITH u AS (UPDATE … RETURNING *)` statement that fails (atrium_require) when it changed no row: absent,
// deleted, or already so. Refused, the request runs again on its full path, which tells 404 from 409 from
// "nothing to change" (and answers the row as it is, with no event).
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/database.ts';
import type { TenantTableName } from '../db/tenant-rows.ts';
import { runFinalStatement } from '../db/final-statement.ts';
import { eventOfChangedRow, type RowEvent } from '../events/outbox.ts';

/** A column and the typed value asked for it, e.g. `['title', sql\`${title}::text\`]`. */
export type ColumnChange = readonly [column: string, value: RawBuilder<unknown>];

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
): Promise<Row> {
  if (changes.length === 0) throw new Error('updateLiveInOneStatement: nothing to change');
  const set = sql.join(changes.map(([column, value]) => sql`${sql.ref(column)} = ${value}`));
  const differs = sql.join(
    changes.map(([column, value]) => sql`${sql.ref(column)} is distinct from ${value}`),
    sql` or `,
  );
  const query = sql<Row>`with u as (
      update ${sql.table(table)} set ${set}, updated_at = ${event.occurredAt}::timestamptz
      where organisation_id = ${organisationId} and id = ${id} and deleted_at is null and (${differs})
      returning *
    ), e as (${eventOfChangedRow(organisationId, event)})
    select u.* from (select atrium_require(exists(select 1 from u), ${`${table} row changed`}::text) as held) as premise left join u on true where premise.held`.compile(db);
  const { rows } = await runFinalStatement(db, query);
  return rows[0];
}
