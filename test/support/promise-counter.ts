// How many promises the process makes while counting (an async_hooks init hook): what the synchronous paths'
// tests hold to a bound (synchronous-read.test.ts, mcp-promises.test.ts). Each promise is an allocation and at
// least one microtask hop (src/maybe-async.ts).
import { createHook } from 'node:async_hooks';
import { dialectUnderTest } from './harness.ts';

/** The skip reason of a test of SQLite's synchronous paths, when the suite runs on PostgreSQL. */
export const sqliteOnly = dialectUnderTest === 'sqlite' ? false : 'SQLite only: on PostgreSQL a read waits on the database';

export function createPromiseCounter() {
  let created = 0;
  const hook = createHook({
    init(_id, type) {
      if (type === 'PROMISE') created++;
    },
  });
  return {
    start(): void {
      created = 0;
      hook.enable();
    },
    /** Stops counting; the promises made since start. */
    stop(): number {
      hook.disable();
      return created;
    },
  };
}
