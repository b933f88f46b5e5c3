// The HTTP layer's own answers: problem documents for Fastify's errors, Request-Id, health, error docs.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { errorCatalog } from '../src/errors/error-catalog.ts';
import { startTestApp, type TestContext } from './support/harness.ts';
import type { Caller } from './support/factories.ts';

describe('HTTP layer', () => {
  let t: TestContext;
  let c: Caller;
  before(async () => {
    t = await startTestApp({ env: { BODY_LIMIT_BYTES: '2048' } });
    c = await t.make.caller();
  });
  after(() => t.close());

  test('an unknown route is a 404 problem document with every required field', async () => {
    const res = await t.api.request({ host: c.org.address, key: c.key, path: '/no_such_thing' });
    assert.equal(res.status, 404);
    assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
    const b = res.body;
    assert.equal(b.type, 'https://errors.atrium.test/docs/errors/request.route_not_found');
    assert.equal(b.docs_url, b.type);
    assert.deepEqual(Object.keys(b).sort(), ['category', 'code', 'detail', 'docs_url', 'request_id', 'status', 'title', 'type']);
    assert.equal(b.request_id, res.headers['request-id']);
  });

  test('a body over the limit is a 413 quota problem and changes nothing', async () => {
    const s = await t.make.section(c.org);
    const res = await t.api.request({ host: c.org.address, key: c.key, method: 'PATCH', path: `/sections/${s.id}`, body: { title: 'x'.repeat(4000) } });
    assert.equal(res.status, 413);
    assert.equal(res.body.code, 'request.body_too_large');
    assert.equal(res.body.category, 'quota');
  });

  test('a path segment over the router limit is a 413 quota problem document', async () => {
    const res = await t.api.request({ host: c.org.address, key: c.key, path: `/sections/ext:${'x'.repeat(1100)}` });
    assert.equal(res.status, 413);
    assert.equal(res.body.code, 'request.too_large');
    assert.equal(res.body.category, 'quota');
  });

  test('every response has a distinct Request-Id', async () => {
    const a = await t.api.request({ path: '/healthz' });
    const b = await t.api.request({ path: '/healthz' });
    assert.match(String(a.headers['request-id']), /^req_[0-9a-f]{32}$/);
    assert.notEqual(a.headers['request-id'], b.headers['request-id']);
  });

  test('a client-sent Request-Id is not trusted', async () => {
    const res = await t.api.request({ path: '/healthz', headers: { 'request-id': 'mine' } });
    assert.notEqual(res.headers['request-id'], 'mine');
  });

  test('/healthz and /readyz answer outside any organisation', async () => {
    assert.deepEqual((await t.api.request({ path: '/healthz', host: 'anything.test' })).body, { status: 'ok' });
    const ready = await t.api.request({ path: '/readyz', host: 'anything.test' });
    assert.equal(ready.status, 200);
    assert.equal(ready.body.status, 'ok');
  });

  test('every error code has a docs page, and the index lists them all', async () => {
    const index = await t.api.request({ path: '/docs/errors' });
    for (const code of Object.keys(errorCatalog)) {
      assert.ok(index.raw.includes(code), code);
      const page = await t.api.request({ path: `/docs/errors/${code}` });
      assert.equal(page.status, 200);
    }
    assert.equal((await t.api.request({ path: '/docs/errors/nope.nope' })).status, 404);
  });

  test('Service-Version: echoed, resolved to the newest revision on or before it, 422 when invalid', async () => {
    const me = (v?: string) => t.api.request({ host: c.org.address, key: c.key, path: '/me', headers: v ? { 'service-version': v } : {} });
    assert.equal((await me()).headers['service-version'], '2026-11-01');
    assert.equal((await me('2027-05-05')).headers['service-version'], '2026-11-01');
    for (const bad of ['2026-13-45', '2026-10-31', 'yesterday', '2026-11-1']) {
      const res = await me(bad);
      assert.equal(res.status, 422, bad);
      assert.equal(res.body.code, 'versioning.invalid_revision');
    }
  });

  test('an unexpected failure is a bare 500 that leaks nothing', async () => {
    const original = t.app.services.sections.get;
    t.app.services.sections.get = async () => {
      throw new Error('SELECT secret FROM vault -- stack');
    };
    try {
      const s = '01a1ffb1-ef6f-770b-ba7c-b487911c9252';
      const res = await t.api.request({ host: c.org.address, key: c.key, path: `/sections/${s}` });
      assert.equal(res.status, 500);
      assert.equal(res.body.code, 'internal.error');
      assert.doesNotMatch(res.raw, /secret|vault|stack|at /);
    } finally {
      t.app.services.sections.get = original;
    }
  });
});
