import assert from 'node:assert/strict';
import { test } from 'node:test';
import { randomFillSync } from 'node:crypto';
import { v7 } from 'uuid';
import { formatV7, newId } from './ids.ts';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('newId: UUIDv7s carrying the time they were made, unique and in the order made', () => {
  const before = Date.now();
  // Enough to draw the random pool many times over and to make thousands in one millisecond.
  const ids = Array.from({ length: 20_000 }, newId);
  const after = Date.now();
  for (const id of ids) assert.match(id, UUID_V7);
  assert.equal(new Set(ids).size, ids.length);
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1]! < ids[i]!, `${ids[i - 1]} before ${ids[i]}`);
  const msecs = (id: string) => parseInt(id.replaceAll('-', '').slice(0, 12), 16);
  assert.ok(msecs(ids[0]!) >= before);
  // The counter may carry into the next millisecond when it overflows, never further than ids were made.
  assert.ok(msecs(ids.at(-1)!) <= after + 1);
});

test('newId: the random part differs between ids of one millisecond', () => {
  const ids = Array.from({ length: 1000 }, newId);
  const tails = new Set(ids.map((id) => id.slice(-12)));
  assert.ok(tails.size > 990, `${tails.size} distinct random tails in 1,000 ids`);
});

test('formatV7: the text uuid makes of the same time, counter and random bytes', () => {
  const random = new Uint8Array(16);
  const times = [0, 1, 0xfff, 2 ** 32 - 1, 2 ** 32, Date.UTC(2026, 10, 30), 2 ** 48 - 1];
  const counters = [0, 1, 0x7fffffff, -1, -0x80000000, 0x12345678];
  for (let i = 0; i < 20_000; i++) {
    randomFillSync(random);
    const msecs = i < times.length * counters.length ? times[i % times.length]! : Math.floor(Math.random() * 2 ** 48);
    const seq = i < times.length * counters.length ? counters[Math.floor(i / times.length)]! : (Math.random() * 2 ** 32) | 0;
    assert.equal(formatV7(random, msecs, seq), v7({ random, msecs, seq }), `msecs ${msecs}, seq ${seq}`);
  }
});
