// Claiming rows for background work so that several workers never take the same one. PostgreSQL:
// `FOR UPDATE SKIP LOCKED` — a row another worker's open transaction holds is passed over, not waited for.
// SQLite has neither clause nor row locks: a write transaction already excludes every other writer of the
// file, and the claim's conditional UPDATE (status or token unchanged) settles the rest.
import type { SelectQueryBuilder } from 'kysely';
import { isPostgres } from './column-types.ts';
import type { Db } from './database.ts';

export function skipLockedForUpdate<DB, TB extends keyof DB, O>(db: Db, query: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O> {
  return isPostgres(db) ? query.forUpdate().skipLocked() : query;
}
