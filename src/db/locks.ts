// A transaction-scoped lock on an arbitrary key, for work that must not run twice at once across processes.
// PostgreSQL: an advisory lock released at commit or rollback, tried (never waited for) with the transaction's
// first statement, as its rider (riders.ts): it costs no round trip of its own, and the statement's result is
// handed back only once the lock is known to be held. Its statement fails when the lock is not had
// (atrium_require), so that it may also ride with the COMMIT of a transaction that sent nothing before. SQLite: a write transaction already excludes every other
// writer of the file, so there is nothing more to take.
import { CompiledQuery } from 'kysely';
import type { DialectName } from './database.ts';
import { createRider, isPremiseFailure, withRider } from './riders.ts';
import { STATEMENT_HINTS } from './statement-hints.ts';

/** Another transaction holds the lock: `work` was stopped at its first statement, and its transaction rolls back. */
export class LockBusy extends Error {
  constructor(key: string) {
    super(`the transaction lock ${JSON.stringify(key)} is held by another transaction`);
  }
}

// Fails (atrium_require) when the lock is held elsewhere, so that the lock may ride with a COMMIT too.
const LOCK_SQL = "select atrium_require(pg_try_advisory_xact_lock(hashtextextended($1, 0)), 'transaction lock') as locked";

/** Runs `work`, which opens the transaction, with the lock on `key` taken inside it; throws LockBusy if it is held. */
export function withTransactionLock<T>(dialect: DialectName, key: string, work: () => Promise<T>): Promise<T> {
  if (dialect === 'sqlite') return work();
  const query = { ...CompiledQuery.raw(LOCK_SQL, [key]), [STATEMENT_HINTS]: { name: 'atrium_try_transaction_lock', deferrable: false } } as CompiledQuery;
  const lock = createRider(
    query,
    (rows) => {
      if ((rows[0] as { locked: boolean } | undefined)?.locked !== true) throw new LockBusy(key);
    },
    { transactional: true, refused: (failure) => (isPremiseFailure(failure) ? new LockBusy(key) : failure) },
  );
  return withRider(lock, work);
}
