// PostgreSQL refuses to run a named prepared statement whose result's columns changed since it was parsed on
// its connection ("cached plan must not change result type", SQLSTATE 0A000): a `select *` or a `returning *`
// after a migration added a column, which a process of the previous release meets during a rolling upgrade
// (docs/operating.md). The refusal comes before the statement does anything, and it aborts its transaction,
// so the whole transaction may simply run again, on a connection that has parsed nothing yet: the pool
// (pg-pool.ts) lends no connection parsed before the refusal was seen. SQLite re-prepares by itself.
// Kept apart from pg-pool.ts so that what runs writes (src/http/) need not load node-postgres to ask.
import type { MaybeAsync } from '../maybe-async.ts';

export function isStalePreparedStatement(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  return e?.code === '0A000' && typeof e.message === 'string' && e.message.includes('cached plan must not change result type');
}

/**
 * Runs `transaction`, and once more if PostgreSQL refused one of its prepared statements as outdated (above).
 * `transaction` must be whole: it opens its transaction and everything that rides with it (a fresh rider), and
 * keeps nothing outside the database that its second run would repeat.
 */
export function againIfPlansOutdated<T>(transaction: () => MaybeAsync<T>): MaybeAsync<T> {
  const again = (err: unknown) => {
    if (!isStalePreparedStatement(err)) throw err;
    return transaction();
  };
  let result: MaybeAsync<T>;
  try {
    result = transaction();
  } catch (err) {
    return again(err);
  }
  // An answer here at once came from SQLite, which re-prepares by itself: nothing to run again.
  return result instanceof Promise ? result.catch(again) : result;
}
