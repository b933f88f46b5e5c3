// The sign-in lockout (docs/authentication.md#signing-in-and-the-admin-area): more than 10 failed attempts in 15 minutes for one
// (organisation, e-mail) or from one client address, and every further attempt is a 429 until the oldest
// counted failure leaves the window, right pair or not. The counts must hold across server processes, so they
// live in the database, or in Redis when REDIS_URL is set (no write to the database for a failed attempt).
import type { Redis } from 'ioredis';
import { ApiError } from '../errors/api-error.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/database.ts';
import { newId } from '../ids.ts';

export const LOCKOUT_WINDOW_MS = 15 * 60_000;
/** Failures allowed in the window; one more locks. */
export const LOCKOUT_THRESHOLD = 10;

export interface LoginAttempt {
  organisationId: string;
  /** Normalised (trimmed, lower case), so that `Ada@X` and `ada@x` share a count. */
  email: string;
  clientAddress: string;
}

export interface LoginThrottle {
  /** Seconds until another attempt may be made; 0 when one may be made now. */
  retryAfter(attempt: LoginAttempt): Promise<number>;
  recordFailure(attempt: LoginAttempt): Promise<void>;
  /** A right pair forgets the e-mail's failures (not the client address's: one client guessing many e-mails stays locked). */
  forgetEmailFailures(attempt: LoginAttempt): Promise<void>;
}

/** Seconds until the failure that makes the count exceed the threshold leaves the window. */
function secondsUntilBelowThreshold(failureTimesNewestFirst: number[], now: number): number {
  if (failureTimesNewestFirst.length <= LOCKOUT_THRESHOLD) return 0;
  const unlocksAt = failureTimesNewestFirst[LOCKOUT_THRESHOLD] + LOCKOUT_WINDOW_MS;
  return Math.max(1, Math.ceil((unlocksAt - now) / 1000));
}

export function databaseLoginThrottle(deps: { db: Db; clock: Clock }): LoginThrottle {
  const { db, clock } = deps;
  const recent = (now: number) => new Date(now - LOCKOUT_WINDOW_MS).toISOString();
  const failures = (rows: Array<{ failed_at: string }>) => rows.map((r) => Date.parse(r.failed_at));
  return {
    async retryAfter(a) {
      const now = clock.now().getTime();
      const newest = (column: 'email' | 'client_address', value: string) => {
        let query = db.selectFrom('login_failures').select('failed_at').where(column, '=', value).where('failed_at', '>', recent(now));
        if (column === 'email') query = query.where('organisation_id', '=', a.organisationId);
        return query.orderBy('failed_at', 'desc').limit(LOCKOUT_THRESHOLD + 1).execute();
      };
      const [byEmail, byClient] = await Promise.all([newest('email', a.email), newest('client_address', a.clientAddress)]);
      return Math.max(secondsUntilBelowThreshold(failures(byEmail), now), secondsUntilBelowThreshold(failures(byClient), now));
    },
    async recordFailure(a) {
      const at = clock.now();
      await db.insertInto('login_failures').values({ id: newId(), organisation_id: a.organisationId, email: a.email, client_address: a.clientAddress, failed_at: at.toISOString() }).execute();
      // Old rows count for nothing: clear them on the way, so the table stays the size of one window.
      await db.deleteFrom('login_failures').where('failed_at', '<=', recent(at.getTime())).execute();
    },
    async forgetEmailFailures(a) {
      await db.deleteFrom('login_failures').where('organisation_id', '=', a.organisationId).where('email', '=', a.email).execute();
    },
  };
}

const REDIS_RETRY_AFTER_S = 5;

/** The same counts as sorted sets of failure times, one per e-mail and one per client address. */
export function redisLoginThrottle(deps: { redis: Redis; clock: Clock }): LoginThrottle {
  const { redis, clock } = deps;
  const emailKey = (a: LoginAttempt) => `atrium-login:email:${a.organisationId}:${a.email}`;
  const clientKey = (a: LoginAttempt) => `atrium-login:client:${a.clientAddress}`;
  async function newestFailures(key: string, now: number): Promise<number[]> {
    const members = await redis.zrevrangebyscore(key, '+inf', `(${now - LOCKOUT_WINDOW_MS}`, 'WITHSCORES', 'LIMIT', 0, LOCKOUT_THRESHOLD + 1);
    return members.filter((_, i) => i % 2 === 1).map(Number);
  }
  // Without the shared counts no password may be tried (the lockout would not hold): the sign-in is refused with
  // a page that says why, never a 500, and nothing is checked.
  const shared = <T>(work: () => Promise<T>): Promise<T> =>
    work().catch(() => {
      throw new ApiError('shared_state.unavailable', `Signing in is not possible just now: the sign-in lockout store cannot be reached. Try again in ${REDIS_RETRY_AFTER_S} seconds.`, {
        retryAfter: REDIS_RETRY_AFTER_S,
      });
    });
  return {
    retryAfter: (a) => shared(async () => {
      const now = clock.now().getTime();
      const [byEmail, byClient] = await Promise.all([newestFailures(emailKey(a), now), newestFailures(clientKey(a), now)]);
      return Math.max(secondsUntilBelowThreshold(byEmail, now), secondsUntilBelowThreshold(byClient, now));
    }),
    recordFailure: (a) => shared(async () => {
      const now = clock.now().getTime();
      const pipeline = redis.multi();
      for (const key of [emailKey(a), clientKey(a)]) {
        pipeline.zadd(key, now, newId()).zremrangebyscore(key, '-inf', now - LOCKOUT_WINDOW_MS).pexpire(key, LOCKOUT_WINDOW_MS);
      }
      await pipeline.exec();
    }),
    forgetEmailFailures: (a) => shared(async () => void (await redis.del(emailKey(a)))),
  };
}
