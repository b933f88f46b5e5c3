// The one Redis connection of an API process (REDIS_URL), for what processes share through it: rate-limit
// counters and the sign-in lockout. Short timeouts: a request never waits long on a slow Redis.
import { Redis } from 'ioredis';

export function connectRedis(url: string): Redis {
  return new Redis(url, { connectTimeout: 2000, maxRetriesPerRequest: 1, lazyConnect: false });
}
