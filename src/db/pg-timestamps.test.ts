import { test } from 'node:test';
import assert from 'node:assert/strict';
import { timestamptzToIso } from './pg-timestamps.ts';

const viaDate = (text: string) => new Date(text).toISOString();
/** The same instant written as RFC 3339 (`T`, `±HH:MM`), which Date reads with its ISO parser. */
const asRfc3339 = (text: string) => text.replace(' ', 'T').replace(/([+-]\d{2})$/, '$1:00');

test('a UTC timestamptz reads as the instant it names, for every length of fraction PostgreSQL writes', () => {
  const fractions = ['', '.9', '.94', '.949', '.9491', '.94912', '.949123', '.000001', '.5', '.05', '.999999'];
  const instants = ['2026-11-29 16:49:46', '1970-01-01 00:00:00', '0100-01-01 00:00:00', '9999-12-31 23:59:59', '2024-02-29 12:00:00', '0001-01-01 00:00:00', '0049-06-30 12:00:00', '0099-12-31 23:59:59'];
  for (const instant of instants) {
    for (const fraction of fractions) {
      const text = `${instant}${fraction}+00`;
      assert.equal(timestamptzToIso(text), viaDate(asRfc3339(text)), text);
    }
  }
  // The years 1 to 99 are where PostgreSQL's own form misled Date's legacy parser (1950-2049).
  assert.equal(timestamptzToIso('0001-01-01 00:00:00+00'), '0001-01-01T00:00:00.000Z');
  assert.equal(viaDate('0001-01-01 00:00:00+00'), '2001-01-01T00:00:00.000Z');
});

test('another offset reads as the instant it names, the years 1 to 99 included', () => {
  for (const text of ['2026-11-29 17:49:46.949+01', '2026-11-29 11:19:46.949-05:30', '2026-11-29 11:19:46-05', '0001-01-01 01:00:00.123456+01', '0050-01-01 00:00:00-03']) {
    assert.equal(timestamptzToIso(text), viaDate(asRfc3339(text)), text);
  }
  assert.equal(timestamptzToIso('0001-01-01 01:00:00+01'), '0001-01-01T00:00:00.000Z');
});

test('anything else goes through Date as it is, as before', () => {
  for (const text of ['2026-11-29 16:49:46.949+00:00', '2026-11-29T16:49:46.949Z']) {
    assert.equal(timestamptzToIso(text), viaDate(text), text);
  }
  // Outside the four-digit years the rearranging would not keep: Date's answer, or its refusal.
  assert.equal(timestamptzToIso('12026-11-29 16:49:46+00'), viaDate('12026-11-29 16:49:46+00'));
  assert.throws(() => timestamptzToIso('infinity'), RangeError);
  assert.throws(() => timestamptzToIso('0044-03-15 12:00:00+00 BC'), RangeError);
});

test('the answer is always a 24-character RFC 3339 UTC string', () => {
  for (const text of ['2026-11-29 16:49:46+00', '2026-11-29 16:49:46.1+00', '2026-11-29 16:49:46.123456+00']) {
    assert.match(timestamptzToIso(text), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  }
});
