// Time comes from an injected clock so that time-dependent rules are tested without sleeping.
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export function nowIso(clock: Clock): string {
  return clock.now().toISOString();
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
