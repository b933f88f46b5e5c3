// When to try a failed delivery again (spec: Events 6, Limits: at most 72 hours). The schedule follows Svix's:
// widening intervals, each with ±20 % jitter so that many failed deliveries do not return in one wave.
// A Retry-After from the endpoint (429/503) is honoured when it asks for longer.
export const RETRY_WINDOW_MS = 72 * 3600_000;
const SCHEDULE_MS = [5_000, 5 * 60_000, 30 * 60_000, 2 * 3600_000, 5 * 3600_000, 10 * 3600_000, 10 * 3600_000, 14 * 3600_000];
export const MAX_ATTEMPTS = SCHEDULE_MS.length + 1;

/** The time of the next attempt after `attempts` failed ones, or null when the delivery has failed for good. */
export function nextAttemptAt(firstAttemptAt: number, now: number, attempts: number, retryAfterSeconds: number | null, random = Math.random): number | null {
  if (attempts >= MAX_ATTEMPTS) return null;
  const base = SCHEDULE_MS[attempts - 1];
  let delay = base * (0.8 + 0.4 * random());
  if (retryAfterSeconds !== null) delay = Math.max(delay, retryAfterSeconds * 1000);
  const deadline = firstAttemptAt + RETRY_WINDOW_MS;
  if (now >= deadline) return null;
  return Math.min(now + delay, deadline);
}
