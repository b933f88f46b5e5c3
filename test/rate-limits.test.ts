// Rate limits and concurrency caps per credential, with their 429 problem documents and headers.
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Type from 'typebox';
import { defineOperation } from '../src/operations/operation.ts';
import { startTestApp, createTestDatabase, type TestContext } from './support/harness.ts';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { systemClock } from '../src/clock.ts';
import { createFactories } from './support/factories.ts';
import { redisAnswers, testRedisUrl } from './support/redis.ts';
import { until } from './support/wait.ts';

describe('rate limit per credential', () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp({ env: { RATE_LIMIT_PER_MINUTE: '3' } });
  });
  after(() => t.close());

  test('the request over the limit is a 429 with Retry-After, retry_after and RateLimit-* headers; other credentials are unaffected', async () => {
    const c = await t.make.caller();
    const other = await t.make.caller({ org: c.org });
    const me = (key: string) => t.api.request({ host: c.org.address, key, path: '/me' });
    for (let i = 0; i < 3; i++) {
      const ok = await me(c.key);
      assert.equal(ok.status, 200);
      assert.equal(ok.headers['ratelimit-limit'], '3');
      assert.equal(ok.headers['ratelimit-remaining'], String(2 - i));
    }
    const limited = await me(c.key);
    assert.equal(limited.status, 429);
    assert.equal(limited.body.code, 'rate_limit.exceeded');
    assert.equal(limited.body.category, 'rate_limit');
    assert.ok(Number(limited.headers['retry-after']) >= 1);
    assert.equal(limited.body.retry_after, Number(limited.headers['retry-after']));
    assert.equal(limited.headers['ratelimit-remaining'], '0');
    assert.equal((await me(other.key)).status, 200);
  });

  test('a limited write changes nothing and records no idempotency key', async () => {
    const c = await t.make.caller();
    const s = await t.make.section(c.org, { title: 'Before' });
    const patch = (title: string) => t.api.request({ host: c.org.address, key: c.key, method: 'PATCH', path: `/sections/${s.id}`, body: { title }, headers: { 'idempotency-key': `k-${title}` } });
    for (const title of ['a', 'b', 'c']) assert.equal((await patch(title)).status, 200);
    assert.equal((await patch('d')).status, 429);
    const row = await t.database.db.selectFrom('sections').select('title').where('id', '=', s.id).executeTakeFirstOrThrow();
    assert.equal(row.title, 'c');
    assert.equal((await t.database.db.selectFrom('idempotency_records').select('idempotency_key').where('idempotency_key', '=', 'k-d').execute()).length, 0);
  });
});

describe('concurrency cap per credential', () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  // Resolved once two requests are inside the handler, holding both slots (a fixed sleep is a race on a busy CI).
  let entered = 0;
  const { promise: bothInside, resolve: nowBothInside } = Promise.withResolvers<void>();
  // What the handler waits for, and who hears that a request is inside it (the second test sets its own).
  let gateNow = gate;
  let onEntered = () => {};
  const slow = defineOperation({
    id: 'testSlowRead',
    method: 'GET',
    path: '/test_slow',
    tag: 'Test',
    summary: 'Waits for the test to release it',
    scope: 'courses:read',
    capability: 'course/view',
    writes: false,
    success: { status: 200, schema: Type.Object({ ok: Type.Boolean() }), description: 'Released.' },
    errors: [],
    handler: async () => {
      if (++entered === 2) nowBothInside();
      onEntered();
      await gateNow;
      return { ok: true };
    },
  });
  let t: TestContext;
  before(async () => {
    t = await startTestApp({ env: { CONCURRENCY_LIMIT: '2' }, operations: [slow] });
  });
  after(() => t.close());

  test('the request over the cap is a 429 rate_limit.concurrency; the slot frees when a request ends', async () => {
    const c = await t.make.caller();
    const call = () => t.api.request({ host: c.org.address, key: c.key, path: '/test_slow' });
    const running = [call(), call()];
    await bothInside;
    const third = await call();
    assert.equal(third.status, 429);
    assert.equal(third.body.code, 'rate_limit.concurrency');
    assert.equal(third.headers['retry-after'], '1');
    release();
    for (const r of await Promise.all(running)) assert.equal(r.status, 200);
    assert.equal((await call()).status, 200);
  });

  test('a client that goes away before its answer frees its slot', async () => {
    const c = await t.make.caller();
    const port = await t.listen();
    const { promise: hold, resolve: letGo } = Promise.withResolvers<void>();
    const { promise: twoInside, resolve: nowTwoInside } = Promise.withResolvers<void>();
    let inside = 0;
    gateNow = hold;
    onEntered = () => ++inside === 2 && nowTwoInside();
    // Two requests over real sockets hold both slots, waiting in the handler; then their clients go away.
    const held = [0, 1].map(() => {
      const req = http.get({ host: '127.0.0.1', port, path: '/api/v1/test_slow', headers: { host: c.org.address, authorization: `Bearer ${c.key}` } });
      req.on('error', () => {});
      return req;
    });
    await twoInside;
    const call = () => t.api.request({ host: c.org.address, key: c.key, path: '/test_slow' });
    gateNow = Promise.resolve();
    assert.equal((await call()).status, 429, 'both slots held');
    for (const req of held) req.destroy();
    // Their handlers still wait; their slots are free once the server has seen the sockets close.
    await until(async () => (await Promise.all([call(), call()])).every((r) => r.status === 200), 'two requests fit again');
    letGo();
  });
});

describe('rate limit shared through Redis', async () => {
  const available = await redisAnswers();
  test('two processes (apps) on one Redis share one budget per credential', { skip: available ? false : `no Redis answers at ${testRedisUrl}` }, async () => {
    const testDb = await createTestDatabase();
    const config = loadConfig({ LOG_LEVEL: 'silent', DEV_BOOTSTRAP: 'false', RATE_LIMIT_PER_MINUTE: '4', REDIS_URL: testRedisUrl });
    const a = await buildApp({ config, database: testDb.database, clock: systemClock });
    const second = testDb.reopen();
    const b = await buildApp({ config, database: second, clock: systemClock });
    try {
      const make = createFactories(a.services, testDb.database);
      const c = await make.caller();
      const call = (app: typeof a) => app.inject({ url: '/api/v1/me', headers: { host: c.org.address, authorization: `Bearer ${c.key}` } });
      const statuses = [];
      for (const app of [a, b, a, b, a, b]) statuses.push((await call(app)).statusCode);
      assert.deepEqual(statuses, [200, 200, 200, 200, 429, 429]);
    } finally {
      await a.close();
      await b.close();
      await second.close();
      await testDb.drop();
    }
  });
});
