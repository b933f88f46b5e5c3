// Savepoints: part of a transaction that can be undone while the rest of it carries on. Both engines spell
// them alike. On PostgreSQL they are also what lets a transaction continue after a failed statement (a
// unique violation): without rolling back to a savepoint, every later statement would be refused.
import { sql } from 'kysely';
import type { Db } from './database.ts';

const NAME = /^[a-z_][a-z0-9_]*$/;

/**
 * Runs `work` inside a savepoint of the transaction `tx`: kept when it returns, undone when it throws (and
 * the error rethrown). `name` is a fixed identifier of the caller, not data.
 */
export async function inSavepoint<T>(tx: Db, name: string, work: () => Promise<T>): Promise<T> {
  if (!NAME.test(name)) throw new Error(`invalid savepoint name ${name}`);
  const id = sql.raw(name);
  await sql`savepoint ${id}`.execute(tx);
  let result: T;
  try {
    result = await work();
  } catch (err) {
    try {
      await sql`rollback to savepoint ${id}`.execute(tx);
      await sql`release savepoint ${id}`.execute(tx);
    } catch {
      // The connection itself failed: the caller's error says more than this one, and the whole
      // transaction is lost anyway.
    }
    throw err;
  }
  await sql`release savepoint ${id}`.execute(tx);
  return result;
}
