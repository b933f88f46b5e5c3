// When the database cannot serve us (docs/conventions.md#errors, docs/operating.md#starting-losing-the-database-stopping): errors that mean "the
// database is away or cannot be written", as opposed to a bug or a constraint, become a 502
// `database.unavailable` with Retry-After instead of a 500 (a process starting before its database waits for it:
// wait-for-database.ts).

/** What a client is told to wait before retrying while the database is away. */
export const DATABASE_RETRY_AFTER_S = 5;

// Node's socket errors on the way to PostgreSQL.
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ECONNABORTED']);
// SQLSTATEs: class 08 connection exceptions, operator intervention (shutdown, crash, starting up), too many
// connections, and a statement cancelled because the server is going away.
const PG_STATES = /^(08...|57P0[1-4]|53300)$/;
// node-postgres reports a lost or timed-out connection only in its message ("timeout expired": a connection
// of its own, such as a shared reader's in postgres-driver.ts, that could not connect in time).
const PG_MESSAGES = /Connection terminated|timeout exceeded when trying to connect|Query read timeout|connection error and is not queryable|Client was closed and is not queryable|Connection timeout|^timeout expired$/i;
// SQLite primary result codes (the low byte of extended ones): BUSY 5 (another process held the write lock
// beyond busy_timeout), READONLY 8, IOERR 10, FULL 13 (disk full or max_page_count), CANTOPEN 14.
const SQLITE_CODES = new Set([5, 8, 10, 13, 14]);

export function isDatabaseUnavailable(err: unknown): boolean {
  if (err === null || typeof err !== 'object') return false;
  const e = err as { code?: unknown; errcode?: unknown; message?: unknown; cause?: unknown };
  if (typeof e.code === 'string' && (NETWORK_CODES.has(e.code) || PG_STATES.test(e.code))) return true;
  if (e.code === 'ERR_SQLITE_ERROR' && typeof e.errcode === 'number' && SQLITE_CODES.has(e.errcode & 0xff)) return true;
  if (typeof e.message === 'string' && PG_MESSAGES.test(e.message)) return true;
  // AggregateError (a connection refused on every address of a host name) and wrapped causes.
  const inner = (err as { errors?: unknown[] }).errors;
  if (Array.isArray(inner) && inner.some(isDatabaseUnavailable)) return true;
  return e.cause !== undefined && e.cause !== err && isDatabaseUnavailable(e.cause);
}

/** What an operator may read in a log about why the database is not available (no connection string). */
export function describeDatabaseError(err: unknown): string {
  const e = err as { code?: unknown; errstr?: unknown; message?: unknown };
  return [e.code, e.errstr ?? e.message].filter((part) => typeof part === 'string' && part !== '').join(': ') || String(err);
}
