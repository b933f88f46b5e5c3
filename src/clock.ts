// Time comes from an injected clock so that time-dependent rules are tested without sleeping.
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** The clock's time as an ISO 8601 string (`Date#toISOString`'s), as every write stores it. */
export function nowIso(clock: Clock): string {
  return isoTime(clock.now());
}

// V8's `Date#toISOString` formats each date through a printf-style formatter: 0.5 µs a call in a loop, and a
// write asks it three times (the row's `updated_at`, its event's and its audit entry's time). The dates a process
// formats are mostly of the same second, so the text up to the milliseconds is kept for the last second
// formatted and only the milliseconds are written: 0.04 µs. Any other second, and a date before 1970 or after
// 9999, is V8's own text (an invalid date still throws its RangeError).
let lastSecond = Number.NaN;
let lastPrefix = '';

/** `date.toISOString()`, the same text, faster for dates of the second formatted last. */
export function isoTime(date: Date): string {
  const time = date.getTime();
  const second = Math.floor(time / 1000);
  if (second !== lastSecond) {
    const text = date.toISOString();
    lastSecond = second;
    // `…:SS.` of `…:SS.mmmZ`.
    lastPrefix = text.slice(0, -4);
    return text;
  }
  const ms = time - second * 1000;
  return `${lastPrefix}${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z`;
}

/** A clock a test can move. */
export function manualClock(start = new Date('2026-11-01T00:00:00.000Z')): Clock & { advance(ms: number): void; set(d: Date): void } {
  let current = start.getTime();
  return {
    now: () => new Date(current),
    advance: (ms: number) => {
      current += ms;
    },
    set: (d: Date) => {
      current = d.getTime();
    },
  };
}
