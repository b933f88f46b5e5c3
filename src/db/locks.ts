// A transaction-scoped lock on an arbitrary key, for work that must not run twice at once across processes.
// PostgreSQL: an advisory lock released at commit or rollback. SQLite: a write transaction already excludes
// every other writer of the file, so there is nothing more to take.
import { sql } from 'kysely';
import type { Db, DialectName } from './database.ts';

export async function tryTransactionLock(tx: Db, dialect: DialectName, key: string): Promise<boolean> {
  if (dialect === 'sqlite') return true;
  const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(hashtextextended(${key}, 0)) as locked`.execute(tx);
  return rows[0].locked;
}
