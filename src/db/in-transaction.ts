// A transaction whose body may answer at once (src/maybe-async.ts): on SQLite a write's statements answer at once
// inside its group (sqlite-group-commit.ts), so a body made of them returns its value, not a promise, and the group
// runs it without awaiting it: a PATCH's service, repository, event and audit entry make no promise of their own.
// Kysely awaits whatever a body returns (PostgreSQL's transactions), so any body may be given here.
import type { Db } from './database-types.ts';
import type { MaybeAsync } from '../maybe-async.ts';

export function inTransaction<T>(db: Db, body: (tx: Db) => MaybeAsync<T>): Promise<T> {
  // The cast is the one place that says so: Kysely's TransactionBuilder.execute is typed for promises, and awaits
  // the body's answer either way (so does the group commit's `run`).
  return db.transaction().execute(body as (tx: Db) => Promise<T>);
}
