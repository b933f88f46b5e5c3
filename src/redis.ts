// The one Redis connection of an API process (REDIS_URL), for what processes share through it: rate-limit
// counters and the sign-in lockout. Short timeouts: a request never waits long on a slow Redis.
import { Redis } from 'ioredis';

export function connectRedis(url: string, onError: (err: Error) => void): Redis {
  const redis = new Redis(url, { connectTimeout: 2000, maxRetriesPerRequest: 1, lazyConnect: false });
  // ioredis reconnects by itself; without a listener each failed attempt would go to stderr as "Unhandled error
  // event". A command issued meanwhile fails, and its caller answers for it (rate limits, login-throttle.ts).
  redis.on('error', onError);
  return redis;
}
