// A process that starts before its database is reachable waits for it (docs/operating.md#starting-losing-the-database-stopping), retrying with
// backoff and logging each failure, instead of exiting.
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { describeDatabaseError } from './availability.ts';
import type { Db } from './database.ts';

export interface WaitLog {
  warn(obj: object, msg?: string): void;
}

const FIRST_RETRY_MS = 250;
const LONGEST_RETRY_MS = 10_000;

/**
 * Resolves once the database answers a query. Until then it retries, waiting 250 ms, then twice as long each
 * time up to 10 s, and logs each failure. Rejects with the signal's reason if the process stops meanwhile.
 */
export async function waitForDatabase(db: Db, options: { log: WaitLog; signal: AbortSignal }): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    options.signal.throwIfAborted();
    try {
      await sql`select 1`.execute(db);
      return;
    } catch (err) {
      const retryInMs = Math.min(FIRST_RETRY_MS * 2 ** (attempt - 1), LONGEST_RETRY_MS);
      options.log.warn({ attempt, retryInMs, error: describeDatabaseError(err) }, 'database not reachable yet; waiting for it');
      await sleep(retryInMs, undefined, { signal: options.signal });
    }
  }
}
