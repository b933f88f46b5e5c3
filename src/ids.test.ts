import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newId } from './ids.ts';

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
