// Rate limits and concurrency caps per credential (spec: Limits; docs/conventions.md#rate-limits), answered with a 429
// problem document, `Retry-After`, `retry_after` and the RateLimit-* headers on every response of an operation.
// - The request rate: with REDIS_URL, @fastify/rate-limit counts in Redis, so that every API process shares
//   one budget. Without it, each process counts alone (there is nothing to share), in the fixed-window counter
//   below: the same window, headers and refusal as the plugin's local store, for a map lookup and three
//   headers instead of the plugin's promise chain on every request (measured in bench/: ~5 µs a request).
// - The concurrency cap counts this process's requests in flight: it protects the process from one caller.
import rateLimit from '@fastify/rate-limit';
import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { ApiError } from '../errors/api-error.ts';

export interface RateLimitSettings {
  perMinute: number;
  concurrency: number;
  /** Shares the counts between processes; without it each process counts alone. */
  redis?: Redis | undefined;
}

/** A step of the request pipeline that may refuse the request; synchronous where it can be. */
export type Limit = (request: FastifyRequest, reply: FastifyReply) => void | Promise<void>;

const WINDOW_MS = 60_000;
const CONCURRENCY_RETRY_AFTER_S = 1;

const credentialKey = (request: FastifyRequest) => request.actor?.credentialId ?? `ip:${request.ip}`;

const exceeded = (max: number, ttlMs: number) =>
  new ApiError('rate_limit.exceeded', `More than ${max} requests a minute with this credential; retry in ${Math.ceil(ttlMs / 1000)} s.`, {
    retryAfter: Math.max(1, Math.ceil(ttlMs / 1000)),
  });

/** Requests per credential in fixed one-minute windows, each starting at the credential's first request in it. */
function createLocalRateLimit(max: number): Limit {
  const windows = new Map<string, { count: number; startedAt: number }>();
  let lastSweep = Date.now();
  return (request, reply) => {
    const now = Date.now();
    // Forget finished windows now and then, so that the map holds only credentials seen this minute.
    if (now - lastSweep >= WINDOW_MS) {
      for (const [key, w] of windows) if (w.startedAt + WINDOW_MS <= now) windows.delete(key);
      lastSweep = now;
    }
    const key = credentialKey(request);
    let w = windows.get(key);
    if (w === undefined || w.startedAt + WINDOW_MS <= now) {
      w = { count: 0, startedAt: now };
      windows.set(key, w);
    }
    w.count += 1;
    const ttl = w.startedAt + WINDOW_MS - now;
    const reset = Math.ceil(ttl / 1000);
    reply.header('ratelimit-limit', max);
    reply.header('ratelimit-remaining', Math.max(0, max - w.count));
    reply.header('ratelimit-reset', reset);
    if (w.count > max) {
      reply.header('retry-after', reset);
      throw exceeded(max, ttl);
    }
  };
}

async function registerSharedRateLimit(app: FastifyInstance, settings: RateLimitSettings, redis: Redis): Promise<Limit> {
  await app.register(rateLimit, {
    global: false,
    max: settings.perMinute,
    timeWindow: WINDOW_MS,
    enableDraftSpec: true,
    redis,
    nameSpace: 'atrium-rate:',
    // Counting is best effort: if Redis is briefly unreachable the request is served, not refused.
    skipOnError: true,
    keyGenerator: credentialKey,
    errorResponseBuilder: (_request, context) => exceeded(context.max, context.ttl),
  });
  return app.rateLimit() as Limit;
}

/** A credential's requests in flight in this process, in the map that holds it while there are any. */
interface Slots {
  readonly key: string;
  readonly of: Map<string, Slots>;
  count: number;
}

/** The slots a response holds (set by the limit, released when the response closes). */
const HELD = Symbol('atrium.concurrencySlots');
type Holding = ServerResponse & { [HELD]?: Slots };

/**
 * 'close' fires once, when the response is sent or the client has gone: either way the slot is free. One function
 * for every response, the slots found on the response: no closure and no `once` wrapper a request (every
 * authenticated request runs this; bench/README.md, 2026-11-30 third session).
 */
function releaseSlot(this: Holding): void {
  const slots = this[HELD];
  if (slots !== undefined && --slots.count === 0) slots.of.delete(slots.key);
}

function createConcurrencyLimit(concurrency: number): Limit {
  const inFlight = new Map<string, Slots>();
  return (request, reply) => {
    const key = credentialKey(request);
    let slots = inFlight.get(key);
    if (slots !== undefined && slots.count >= concurrency) {
      throw new ApiError('rate_limit.concurrency', `At most ${concurrency} requests in flight per credential; retry when one finishes.`, {
        retryAfter: CONCURRENCY_RETRY_AFTER_S,
      });
    }
    if (slots === undefined) inFlight.set(key, (slots = { key, of: inFlight, count: 0 }));
    slots.count += 1;
    const response = reply.raw as Holding;
    response[HELD] = slots;
    response.on('close', releaseSlot);
  };
}

/** The limits, in the order the request pipeline runs them (after authentication, so they count per credential). */
export async function registerRateLimits(app: FastifyInstance, settings: RateLimitSettings): Promise<Limit[]> {
  const rate = settings.redis ? await registerSharedRateLimit(app, settings, settings.redis) : createLocalRateLimit(settings.perMinute);
  return [rate, createConcurrencyLimit(settings.concurrency)];
}
