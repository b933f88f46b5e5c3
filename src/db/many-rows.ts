// Writing many rows of one table in a few statements instead of one statement per row: a bulk request of 500
// operations would otherwise cost 500 statements, each a round trip on PostgreSQL. Both engines run these as
// they are (SQLite ≥ 3.35 for RETURNING). Rows go in chunks that keep a statement's parameters within every
// engine's limit (SQLite's 32,766, PostgreSQL's 65,535).
import { sql } from 'kysely';
import type { Db } from './database.ts';
import type { Tables } from './tables.ts';

const MAX_PARAMETERS = 30_000;

type TableName = keyof Tables & string;

function chunks<T>(items: T[], perItem: number): T[][] {
  const size = Math.max(1, Math.floor(MAX_PARAMETERS / Math.max(1, perItem)));
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Inserts `rows`, which must all name the same columns, in multi-row INSERTs. */
export async function insertMany(db: Db, table: TableName, rows: Array<Record<string, unknown>>): Promise<void> {
  if (rows.length === 0) return;
  for (const chunk of chunks(rows, Object.keys(rows[0]).length)) await db.insertInto(table).values(chunk as never).execute();
}

/** A change to one row: the columns to set, by the row's id. */
export interface RowChange {
  id: string;
  set: Record<string, unknown>;
}

/**
 * Applies each change to its row of the organisation, when the row is live (`deleted_at` is null), in
 * statements of one UPDATE each: every column some change sets becomes `CASE id WHEN … THEN … ELSE column END`.
 * Returns how many rows changed; fewer than `changes.length` means some row was not there or not live any more.
 */
export async function updateLiveMany(db: Db, table: TableName, organisationId: string, changes: RowChange[]): Promise<number> {
  let changed = 0;
  const perChange = Math.max(1, ...changes.map((c) => 1 + 2 * Object.keys(c.set).length));
  for (const chunk of chunks(changes, perChange)) {
    const columns = [...new Set(chunk.flatMap((c) => Object.keys(c.set)))];
    const assignments = columns.map((column) => {
      const cases = chunk.filter((c) => column in c.set).map((c) => sql`when ${sql.ref('id')} = ${c.id} then ${c.set[column]}`);
      return sql`${sql.ref(column)} = case ${sql.join(cases, sql` `)} else ${sql.ref(column)} end`;
    });
    const { rows } = await sql<{ id: string }>`update ${sql.table(table)} set ${sql.join(assignments)}
      where ${sql.ref('organisation_id')} = ${organisationId} and ${sql.ref('id')} in (${sql.join(chunk.map((c) => c.id))}) and ${sql.ref('deleted_at')} is null
      returning ${sql.ref('id')}`.execute(db);
    changed += rows.length;
  }
  return changed;
}
