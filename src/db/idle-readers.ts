// SQLite only (database.ts registers one per database; prepared.ts uses it): runs a read at once when the
// connection has no transaction open, and answers undefined when one is (the read must then queue behind it,
// through Kysely, or it would see that transaction's uncommitted rows). node:sqlite is synchronous, so nothing
// can begin between the check and the read. It spares a hot read Kysely's connection hand-over (a chain of
// promises per query). Keyed by the Kysely instance: a transaction is another instance, so it never has one.
import type { CompiledQuery } from 'kysely';

export type IdleReader = (query: CompiledQuery) => unknown[] | undefined;

export const idleReaders = new WeakMap<object, IdleReader>();
