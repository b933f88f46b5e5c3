import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateApiKey, hashApiKey, isWellFormedApiKey } from './api-key-format.ts';
import { startTestApp, manualClock, type TestContext } from '../../test/support/harness.ts';
import { until } from '../../test/support/wait.ts';

describe('API key format', () => {
  test('live and test prefixes, 256 bits of randomness, a checksum that catches typos', () => {
    const live = generateApiKey('live');
    const test_ = generateApiKey('test');
    assert.match(live, /^atr_live_[0-9A-Za-z]{49}$/);
    assert.match(test_, /^atr_test_[0-9A-Za-z]{49}$/);
    assert.equal(isWellFormedApiKey(live), true);
    const typo = live.slice(0, 20) + (live[20] === 'a' ? 'b' : 'a') + live.slice(21);
    assert.equal(isWellFormedApiKey(typo), false);
    assert.notEqual(generateApiKey('live'), generateApiKey('live'));
  });
});

describe('API keys at rest and in use', () => {
  const clock = manualClock(new Date('2026-11-02T10:00:00.000Z'));
  let t: TestContext;
  before(async () => {
    t = await startTestApp({ clock });
  });
  after(() => t.close());

  test('only a hash is stored; the key itself appears nowhere in the row', async () => {
    const c = await t.make.caller();
    const row = await t.database.db.selectFrom('api_keys').selectAll().where('id', '=', c.keyId).executeTakeFirstOrThrow();
    assert.equal(row.key_hash, hashApiKey(c.key));
    assert.ok(!Object.values(row).some((v) => typeof v === 'string' && v.includes(c.key.slice(9))));
    assert.equal(row.display_prefix, c.key.slice(0, 15));
  });

  test('last_used_at is set on use, and written at most once a minute', async () => {
    const c = await t.make.caller();
    const lastUsed = async () => (await t.database.db.selectFrom('api_keys').select('last_used_at').where('id', '=', c.keyId).executeTakeFirstOrThrow()).last_used_at;
    const call = () => t.api.request({ host: c.org.address, key: c.key, path: '/me' });
    // The write is made in the background, after the response: wait for it rather than for a fixed time.
    const becomes = async (expected: string) => {
      await until(async () => (await lastUsed()) === expected, `last_used_at ${expected}`);
      assert.equal(await lastUsed(), expected);
    };
    assert.equal(await lastUsed(), null);
    await call();
    await becomes('2026-11-02T10:00:00.000Z');
    clock.advance(30_000);
    await call();
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(await lastUsed(), '2026-11-02T10:00:00.000Z', 'not written again within the minute');
    clock.advance(31_000);
    await call();
    await becomes('2026-11-02T10:01:01.000Z');
  });

  test('a key pins the revision it was issued at; /me reports scopes and capabilities', async () => {
    const c = await t.make.caller({ scopes: ['courses:read'], roles: ['teacher'], platformAdmin: false });
    const me = await t.api.request({ host: c.org.address, key: c.key, path: '/me' });
    assert.equal(me.status, 200);
    assert.deepEqual(me.body.scopes, ['courses:read']);
    assert.ok(me.body.capabilities.includes('course/update'));
    assert.ok(!me.body.capabilities.includes('tenant/configure'));
    assert.equal(me.body.credential.pinned_revision, '2026-11-01');
    assert.equal(me.headers['service-version'], '2026-11-01');
  });

  test('creating a key refuses unknown scopes and revisions', async () => {
    const o = await t.make.org();
    const p = await t.make.person(o);
    await assert.rejects(t.make.apiKey(o, p.id, { scopes: ['courses:fly'] }), /unknown scopes: courses:fly/);
    await assert.rejects(t.make.apiKey(o, p.id, { serviceVersion: '2020-01-01' }), /not a revision/);
  });
});
