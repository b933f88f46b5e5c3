// Statements that skip Kysely's executor and its connection hand-over (a chain of promises per query, on SQLite
// about as costly as the statement itself). Keyed by the Kysely instance the caller holds; prepared.ts,
// savepoints.ts, deferred-writes.ts and final-statement.ts use it (statementRows). On SQLite they run at once, on node:sqlite:
// - The database (database.ts registers it): a read runs at once when the connection has no transaction open
//   but the turn's shared read (sqlite-adapter.ts, readInTurn), and the runner answers undefined when one is
//   (the read must then queue behind it, through Kysely, or it would see that transaction's uncommitted rows). node:sqlite is synchronous, so nothing can begin between
//   the check and the read. Writes always go through Kysely's queue.
// - A transaction of the group commit (sqlite-group-commit.ts): every statement runs at once, reads and writes:
//   the transaction holds the one connection for as long as its body runs, so nothing else can be using it.
// On PostgreSQL, the root database's plain reads (postgres-database.ts) go straight to the driver, which sends them
// as it would through Kysely (PipelinedPostgresDriver.readDirect), and every statement of a transaction goes
// straight to the transaction's connection (pg-transactions.ts); the runner answers their promise. Everything
// else outside a transaction goes through Kysely.
import type { CompiledQuery, QueryResult } from 'kysely';
import type { MaybeAsync } from '../maybe-async.ts';

export interface DirectRunner {
  /**
   * The statement's rows (none for a write without RETURNING), or their promise (PostgreSQL), or undefined when it
   * must go through Kysely.
   */
  rows(query: CompiledQuery, reads: boolean): unknown[] | Promise<unknown[]> | undefined;
  /**
   * A write's count of changed rows (a write without RETURNING), at once: only where every statement runs at once
   * (a SQLite transaction of the group commit). prepared.ts `changes` uses it.
   */
  changes?(query: CompiledQuery): number;
}

export const directStatements = new WeakMap<object, DirectRunner>();

/**
 * The statement's rows: at once where its runner answers at once, else their promise, through Kysely where no
 * runner takes it. `reads`: the statement only reads (a root database's runner takes nothing else).
 */
export function statementRows(db: { executeQuery(query: CompiledQuery): Promise<QueryResult<unknown>> }, query: CompiledQuery, reads: boolean): MaybeAsync<unknown[]> {
  return directStatements.get(db)?.rows(query, reads) ?? db.executeQuery(query).then((result) => result.rows);
}
