// Rate limits and concurrency caps per credential (spec: Limits; CONTRACT: Rate limits). The request rate is
// counted by @fastify/rate-limit — in Redis when REDIS_URL is set, so every API process shares one budget —
// and answered with a 429 problem document, `Retry-After`, `retry_after` and the RateLimit-* headers.
// The concurrency cap counts this process's requests in flight: it protects the process from one caller.
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { Redis } from 'ioredis';
import { ApiError } from './api-error.ts';

export interface RateLimitSettings {
  perMinute: number;
  concurrency: number;
  /** Shares the counts between processes; without it each process counts alone. */
  redis?: Redis | undefined;
}


const CONCURRENCY_RETRY_AFTER_S = 1;

const credentialKey = (request: FastifyRequest) => request.actor?.credentialId ?? `ip:${request.ip}`;

export async function registerRateLimits(app: FastifyInstance, settings: RateLimitSettings): Promise<onRequestAsyncHookHandler[]> {
  const { redis } = settings;
  await app.register(rateLimit, {
    global: false,
    max: settings.perMinute,
    timeWindow: 60_000,
    enableDraftSpec: true,
    ...(redis ? { redis, nameSpace: 'atrium-rate:' } : {}),
    // Counting is best effort: if Redis is briefly unreachable the request is served, not refused.
    skipOnError: true,
    keyGenerator: credentialKey,
    errorResponseBuilder: (_request, context) =>
      new ApiError('rate_limit.exceeded', `More than ${context.max} requests a minute with this credential; retry in ${Math.ceil(context.ttl / 1000)} s.`, {
        retryAfter: Math.max(1, Math.ceil(context.ttl / 1000)),
      }),
  });

  const inFlight = new Map<string, number>();
  const limitConcurrency = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const key = credentialKey(request);
    const current = inFlight.get(key) ?? 0;
    if (current >= settings.concurrency) {
      throw new ApiError('rate_limit.concurrency', `At most ${settings.concurrency} requests in flight per credential; retry when one finishes.`, {
        retryAfter: CONCURRENCY_RETRY_AFTER_S,
      });
    }
    inFlight.set(key, current + 1);
    // 'close' fires once the response is sent or the client has gone: either way the slot is free.
    reply.raw.once('close', () => {
      const n = (inFlight.get(key) ?? 1) - 1;
      if (n <= 0) inFlight.delete(key);
      else inFlight.set(key, n);
    });
  };

  return [app.rateLimit() as onRequestAsyncHookHandler, limitConcurrency];
}
