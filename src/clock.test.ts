import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isoTime, manualClock, nowIso } from './clock.ts';

test('isoTime: the text of Date#toISOString, for any date, in any order', () => {
  const times = [
    // Every millisecond of one second, in order and back again: the kept second's text is used.
    ...Array.from({ length: 1000 }, (_, ms) => Date.UTC(2026, 10, 30, 12, 0, 0, ms)),
    ...Array.from({ length: 1000 }, (_, ms) => Date.UTC(2026, 10, 30, 12, 0, 0, 999 - ms)),
    // Across seconds, minutes, days, years; before 1970; beyond 9999 and before year 0 (six-digit years).
    Date.UTC(2026, 10, 30, 12, 0, 1, 0),
    Date.UTC(2026, 11, 31, 23, 59, 59, 999),
    Date.UTC(2027, 0, 1, 0, 0, 0, 0),
    0,
    -1,
    -999,
    -1000,
    -1001,
    Date.UTC(1969, 11, 31, 23, 59, 59, 5),
    Date.UTC(10000, 0, 1, 0, 0, 0, 42),
    Date.UTC(-1, 5, 1, 0, 0, 0, 7),
    8.64e15,
    -8.64e15,
  ];
  for (let i = 0; i < 5000; i++) times.push(Math.floor(Math.random() * 4e12) - 1e12);
  for (const time of times) assert.equal(isoTime(new Date(time)), new Date(time).toISOString(), `at ${time}`);
});

test('isoTime: an invalid date throws as toISOString does, and changes nothing kept', () => {
  const before = isoTime(new Date(Date.UTC(2026, 0, 1, 0, 0, 0, 1)));
  assert.throws(() => isoTime(new Date(Number.NaN)), RangeError);
  assert.equal(isoTime(new Date(Date.UTC(2026, 0, 1, 0, 0, 0, 2))), before.replace('.001Z', '.002Z'));
});

test('nowIso: the clock\'s time as toISOString writes it', () => {
  const clock = manualClock(new Date('2026-11-30T08:15:30.250Z'));
  assert.equal(nowIso(clock), '2026-11-30T08:15:30.250Z');
  clock.advance(5);
  assert.equal(nowIso(clock), '2026-11-30T08:15:30.255Z');
});
