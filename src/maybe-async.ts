// A value now, or a promise of it: what a step of the request path returns when it may have to wait (an uncached
// credential, a limit held in Redis, PostgreSQL) but usually does not (node:sqlite answers at once, a verified
// API key is cached). A read on SQLite then runs from its admission to its answer in one call, without the
// promise each `async` layer would make and the microtask each `await` would queue (docs/development.md, rule
// 11; test/synchronous-read.test.ts). The read path's layers take this form, and the body of a write's transaction
// on its hot path (db/in-transaction.ts): the write itself still waits for its commit.

export type MaybeAsync<T> = T | Promise<T>;

/**
 * `next` applied to `value`: at once when the value is here (a throw from `next` is then thrown at once), or when
 * it comes (a throw rejects). A caller that awaits the result sees both the same way.
 */
export function andThen<T, U>(value: MaybeAsync<T>, next: (value: T) => MaybeAsync<U>): MaybeAsync<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}

/**
 * What `start` answers, as a promise: its promise as it is, a value now resolved, a throw a rejection, for a caller
 * that `.catch`es or `.then`s it (a step that may fail at once, as a statement of a SQLite transaction does).
 */
export function asPromise<T>(start: () => MaybeAsync<T>): Promise<T> {
  try {
    const value = start();
    return value instanceof Promise ? value : Promise.resolve(value);
  } catch (err) {
    return Promise.reject(err);
  }
}

/**
 * `next` of what `start` answers, or `failed` of what it throws or rejects with: at once where `start` answers at
 * once. A failure of `next` itself is not `failed`'s: it is thrown, or rejects, as `next`'s own.
 */
export function attempt<T, U>(start: () => MaybeAsync<T>, next: (value: T) => MaybeAsync<U>, failed: (err: unknown) => MaybeAsync<U>): MaybeAsync<U> {
  let value: MaybeAsync<T>;
  try {
    value = start();
  } catch (err) {
    return failed(err);
  }
  return value instanceof Promise ? value.then(next, failed) : next(value);
}
