// The Idempotency-Key fingerprint: the same text as JSON.stringify (so records made before it compare
// equal), and no stack overflow however deep the body.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { requestFingerprint } from './request-fingerprint.ts';

const viaStringify = (method: string, url: string, body: unknown) =>
  createHash('sha256').update(`${method} ${url}\n${body === undefined ? '' : JSON.stringify(body)}`).digest('hex');

test('hashes exactly the text JSON.stringify writes, for any JSON value', () => {
  fc.assert(
    fc.property(fc.jsonValue(), fc.string(), (body, url) => {
      assert.equal(requestFingerprint('POST', url, body), viaStringify('POST', url, body));
    }),
    { seed: 1411, numRuns: 500 },
  );
  // What Ajv's defaults and JSON.stringify's rules add: dropped members, null in arrays, non-finite numbers.
  for (const body of [{ a: undefined, b: 1 }, [undefined, () => 1], { n: Number.NaN, i: -Infinity, z: -0 }, { d: new Date(0) }, 'text', 0, null]) {
    assert.equal(requestFingerprint('PATCH', '/x', body), viaStringify('PATCH', '/x', body));
  }
  assert.equal(requestFingerprint('GET', '/x', undefined), viaStringify('GET', '/x', undefined));
});

test('a body nested 1,000,000 levels deep is hashed without overflowing the stack', () => {
  const deep = JSON.parse('['.repeat(1_000_000) + ']'.repeat(1_000_000));
  assert.throws(() => JSON.stringify(deep), RangeError);
  assert.match(requestFingerprint('POST', '/x', deep), /^[0-9a-f]{64}$/);
});

test('only a request that asked for `Prefer: return=minimal` hashes anything more: fingerprints without it are as before', () => {
  const body = { operations: [{ ref: 'a', op: 'delete', id: '0193a5b2-7c1d-7000-8000-000000000001' }] };
  assert.equal(requestFingerprint('POST', '/x/bulk', body, { returnMinimal: false }), viaStringify('POST', '/x/bulk', body));
  assert.equal(requestFingerprint('POST', '/x/bulk', body, {}), viaStringify('POST', '/x/bulk', body));
  const minimal = requestFingerprint('POST', '/x/bulk', body, { returnMinimal: true });
  assert.notEqual(minimal, viaStringify('POST', '/x/bulk', body));
  assert.equal(minimal, requestFingerprint('POST', '/x/bulk', body, { returnMinimal: true }));
  assert.notEqual(requestFingerprint('POST', '/x/bulk', undefined, { returnMinimal: true }), viaStringify('POST', '/x/bulk', undefined));
});
