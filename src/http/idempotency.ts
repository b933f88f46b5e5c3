// spec: Conventions — Idempotency-Key; docs/conventions.md#idempotency. A replay returns the recorded status and
// body with `Idempotency-Replayed: true`; the same key with another request is a 409; a key whose first
// request is still running is a 409 with Retry-After. The record is written in the transaction of the effect,
// so a crash or a 500 leaves neither. Only successes are recorded: a refused request changed nothing and may
// simply be sent again.
import { brotliCompressSync, brotliDecompressSync, constants as zlib } from 'node:zlib';
import { type Clock, nowIso } from '../clock.ts';
import type { Database, Db } from '../db/database.ts';
import { LockBusy, withTransactionLock } from '../db/locks.ts';
import { againIfPlansOutdated } from '../db/outdated-plans.ts';
import { ApiError } from '../errors/api-error.ts';
import { idempotencyRepository, type IdempotencyScope } from './idempotency.repository.ts';
import { isUniqueViolation } from '../db/errors.ts';
import { createRider, isPremiseFailure, withRider, type Rider } from '../db/riders.ts';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;
const IN_PROGRESS_RETRY_AFTER_S = 1;

/**
 * A recorded body of this many characters or more is stored compressed (`response_body_packed`). Brotli at its
 * fastest setting turns a bulk answer of 500 enrolments (234 KB) into 61 KB in 0.7-1 ms; on SQLite storing
 * the text cost 2-2.5 ms of that request (its pages written to the WAL, then again by a checkpoint, fsynced),
 * the compressed bytes a quarter of it. A single resource's answer, a few hundred bytes, stays text.
 */
const PACK_FROM_CHARS = 16 * 1024;
const PACKING = { params: { [zlib.BROTLI_PARAM_QUALITY]: 0, [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT } };

/** How a body's JSON text is stored: as text, or compressed when large. */
function stored(text: string | null): { response_body: string | null; response_body_packed: Uint8Array | null } {
  if (text === null || text.length < PACK_FROM_CHARS) return { response_body: text, response_body_packed: null };
  return { response_body: null, response_body_packed: brotliCompressSync(text, PACKING) };
}

function storedText(found: { response_body: string | null; response_body_packed: Uint8Array | null }): string | null {
  return found.response_body_packed === null ? found.response_body : brotliDecompressSync(found.response_body_packed).toString('utf8');
}

export interface RecordedResponse {
  status: number;
  body: unknown;
  /** The body's JSON text, when the first run gave it (see `run`); a replay has only `body`. */
  text?: string;
  replayed: boolean;
}

/** Reads and checks the header; undefined when absent and optional. */
export function parseIdempotencyKey(header: string | string[] | undefined, mode: 'required' | 'optional'): string | undefined {
  if (header === undefined) {
    if (mode === 'required') throw new ApiError('idempotency.key_required', 'This operation requires the header `Idempotency-Key` (1 to 255 ASCII characters).');
    return undefined;
  }
  if (typeof header !== 'string' || !KEY_PATTERN.test(header)) {
    throw new ApiError('idempotency.key_invalid', 'Header `Idempotency-Key` must be 1 to 255 printable ASCII characters.');
  }
  return header;
}

export { requestFingerprint as fingerprintOf } from './request-fingerprint.ts';

/** The key has a live record: the write that found it was stopped at its first statement and rolled back. */
class KeyUsed extends Error {}

export function createIdempotency(deps: { database: Database; clock: Clock }) {
  const { database, clock } = deps;
  /** Keys whose first request is running in this process; other processes are excluded by the lock. */
  const inFlight = new Set<string>();

  const inProgress = () =>
    new ApiError('idempotency.in_progress', 'A request with this Idempotency-Key is still running; retry after it finishes.', { retryAfter: IN_PROGRESS_RETRY_AFTER_S });

  /** The check, with a keyed write's first statement, that its key has no live record (PostgreSQL). */
  function keyUnused(scope: IdempotencyScope): Rider {
    const query = idempotencyRepository.unusedQuery(database.db, scope, nowIso(clock));
    return createRider(query, () => {}, { transactional: true, refused: (failure) => (isPremiseFailure(failure) ? new KeyUsed() : failure) });
  }

  function replay(found: { fingerprint: string; response_status: number; response_body: string | null; response_body_packed: Uint8Array | null }, fingerprint: string): RecordedResponse {
    if (found.fingerprint !== fingerprint) {
      throw new ApiError('idempotency.key_reused', 'This Idempotency-Key was used with a different method, path, query or body. Use a new key for a new request.');
    }
    const text = storedText(found);
    return { status: found.response_status, body: text === null ? undefined : JSON.parse(text), replayed: true };
  }

  /**
   * `execute` may answer its body's JSON text too (`text`, what the caller will send): it is stored as the
   * record as it is, instead of the body being serialised a second time (a bulk answer is 200 KB).
   * `beforeTransaction` is work that must not hold the database (a network call): it runs once the key is
   * claimed and is not a replay, before the transaction opens.
   */
  async function run(
    scope: IdempotencyScope,
    fingerprint: string,
    execute: (tx: Db) => Promise<{ status: number; body: unknown; text?: string }>,
    beforeTransaction?: () => Promise<void>,
  ): Promise<RecordedResponse> {
    // A completed key is answered from its record, however many retries arrive at once. On PostgreSQL the look
    // rides with the write's first statement, after its lock (riders.ts): a key already used stops the write
    // there, rolled back, before anything of it is decided, and the record is read then. Work that must not
    // run twice (`beforeTransaction`: a mail) looks first, as SQLite does, where a look costs no round trip.
    const looksInTransaction = database.dialect === 'postgres' && beforeTransaction === undefined;
    if (!looksInTransaction) {
      const existing = await idempotencyRepository.find(database.db, scope, nowIso(clock));
      if (existing) return replay(existing, fingerprint);
    }
    const lockKey = `${scope.organisationId}:${scope.credentialId}:${scope.key}`;
    if (inFlight.has(lockKey)) throw inProgress();
    inFlight.add(lockKey);
    try {
      await beforeTransaction?.();
      // Another process may be running this key (→ 409): the lock, taken with the transaction's first statement,
      // is held before any result of it is used. Where we looked first, one that finished it since has left its
      // record, which fails ours at COMMIT and so rolls this effect back: the catch below replays it.
      const transaction = () => database.db.transaction().execute(async (tx) => {
        const response = await execute(tx);
        const now = clock.now();
        await idempotencyRepository.save(tx, {
          organisation_id: scope.organisationId,
          credential_id: scope.credentialId,
          idempotency_key: scope.key,
          fingerprint,
          response_status: response.status,
          ...stored(response.text ?? (response.body === undefined ? null : JSON.stringify(response.body))),
          created_at: now.toISOString(),
          expires_at: new Date(now.getTime() + IDEMPOTENCY_TTL_MS).toISOString(),
        });
        return { ...response, replayed: false };
      });
      // Whole again, its key's check with it, if a migration outdated one of its statements (db/outdated-plans.ts).
      return await againIfPlansOutdated(() => {
        const unused = looksInTransaction ? keyUnused(scope) : undefined;
        return withTransactionLock(database.dialect, `idempotency:${lockKey}`, () => (unused ? withRider(unused, transaction) : transaction()));
      });
    } catch (err) {
      if (err instanceof LockBusy) throw inProgress();
      // The key was used already (seen with the write's first statement), or another process committed it first
      // (SQLite shared by several processes, or PostgreSQL between our first look and our lock): the record's
      // insert failed. Either way our effect rolled back, and the record answers.
      if (!(err instanceof KeyUsed) && !isUniqueViolation(err)) throw err;
      const winner = await idempotencyRepository.find(database.db, scope, nowIso(clock));
      if (!winner) throw err;
      return replay(winner, fingerprint);
    } finally {
      inFlight.delete(lockKey);
    }
  }

  return {
    run,
    purgeExpired: () => idempotencyRepository.purgeExpired(database.db, nowIso(clock)),
  };
}

export type Idempotency = ReturnType<typeof createIdempotency>;
