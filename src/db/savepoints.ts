// Savepoints: part of a transaction that can be undone while the rest of it carries on. Both engines spell
// them alike. On PostgreSQL they are also what lets a transaction continue after a failed statement (a
// unique violation): without rolling back to a savepoint, every later statement would be refused.
import { CompiledQuery } from 'kysely';
import type { Db } from './database.ts';
import { STATEMENT_HINTS } from './statement-hints.ts';
import { statementRows } from './direct-statements.ts';

const NAME = /^[a-z_][a-z0-9_]*$/;

type Verb = 'savepoint' | 'rollback to savepoint' | 'release savepoint';
const compiled = new Map<string, CompiledQuery>();

/**
 * The statement, compiled once per name. Deferrable: nobody reads its result, so on PostgreSQL it travels with
 * the transaction's next statement (postgres-driver.ts) instead of costing a round trip of its own. A bulk
 * request opens and releases one per operation; an operation that only reads (an upsert that finds its
 * record already as asked) then costs no round trip at all. Should one fail, the next statement fails with
 * its error and the whole transaction is rolled back, as if it had failed at once.
 */
function statement(verb: Verb, name: string): CompiledQuery {
  const key = `${verb} ${name}`;
  let query = compiled.get(key);
  if (query === undefined) {
    query = { ...CompiledQuery.raw(key), [STATEMENT_HINTS]: { name: `atrium_${verb.replaceAll(' ', '_')}_${name}`, deferrable: true, releasesSavepoint: verb === 'release savepoint' } } as CompiledQuery;
    compiled.set(key, query);
  }
  return query;
}

/** On SQLite, at once (direct-statements.ts); a bulk request runs two of these per operation. */
async function run(tx: Db, query: CompiledQuery): Promise<void> {
  const done = statementRows(tx, query, false);
  if (done instanceof Promise) await done;
}

/**
 * Runs `work` inside a savepoint of the transaction `tx`: kept when it returns, undone when it throws (and
 * the error rethrown). `name` is a fixed identifier of the caller, not data.
 */
export async function inSavepoint<T>(tx: Db, name: string, work: () => Promise<T>): Promise<T> {
  if (!NAME.test(name)) throw new Error(`invalid savepoint name ${name}`);
  await run(tx, statement('savepoint', name));
  let result: T;
  try {
    result = await work();
    // Inside the try: a deferred write of `work` (deferred-writes.ts) is sent with the release, and its
    // failure must undo this savepoint like any other.
    await run(tx, statement('release savepoint', name));
  } catch (err) {
    try {
      await run(tx, statement('rollback to savepoint', name));
      await run(tx, statement('release savepoint', name));
    } catch {
      // The connection itself failed: the caller's error says more than this one, and the whole
      // transaction is lost anyway.
    }
    throw err;
  }
  return result;
}
