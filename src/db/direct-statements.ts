// SQLite only: statements that run at once on node:sqlite instead of through Kysely's connection hand-over (a
// chain of promises per query, about as costly as the statement itself). Keyed by the Kysely instance the
// caller holds; prepared.ts and savepoints.ts use it.
// - The database (database.ts registers it): a read runs at once when the connection has no transaction open
//   but the turn's shared read (sqlite-adapter.ts, readInTurn), and the runner answers undefined when one is
//   (the read must then queue behind it, through Kysely, or it would see that transaction's uncommitted rows). node:sqlite is synchronous, so nothing can begin between
//   the check and the read. Writes always go through Kysely's queue.
// - A transaction of the group commit (sqlite-group-commit.ts): every statement runs at once, reads and writes:
//   the transaction holds the one connection for as long as its body runs, so nothing else can be using it.
import type { CompiledQuery } from 'kysely';

/** The statement's rows (none for a write without RETURNING), or undefined when it must go through Kysely. */
export type DirectRunner = (query: CompiledQuery, reads: boolean) => unknown[] | undefined;

export const directStatements = new WeakMap<object, DirectRunner>();
