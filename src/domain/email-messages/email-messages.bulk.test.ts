// Operation 8: POST /email_messages/bulk, on the shared bulk engine (its own suite covers the engine in depth
// through lesson pages); here, what email messages allow and how their data is checked.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestContext } from '../../../test/support/harness.ts';
import type { Caller } from '../../../test/support/factories.ts';

describe('POST /email_messages/bulk (operation 8)', () => {
  let t: TestContext;
  let c: Caller;
  let courseId: string;
  before(async () => {
    t = await startTestApp();
    c = await t.make.caller();
    courseId = (await t.make.course(c.org)).id;
  });
  after(() => t.close());

  let keys = 0;
  const bulk = (body: unknown, key = `bulk-${++keys}`) =>
    t.api.request({ host: c.org.address, key: c.key, method: 'POST', path: '/email_messages/bulk', body, headers: { 'idempotency-key': key } });
  const message = (subject: string) => ({ subject, body: { format: 'plain', content: 'Hello' }, audience: { type: 'course', course_id: courseId } });
  const count = async () => (await t.database.db.selectFrom('email_messages').select('id').where('organisation_id', '=', c.org.id).execute()).length;

  test('create and upsert, mixed with failures: results in request order, summary counts, one event per success', async () => {
    const eventsBefore = (await t.database.db.selectFrom('outbox_events').select('id').where('organisation_id', '=', c.org.id).execute()).length;
    const res = await bulk({
      operations: [
        { ref: 'a', op: 'create', data: message('Welcome') },
        { ref: 'b', op: 'upsert', external_id: 'newsletter-1', data: message('Newsletter') },
        { ref: 'c', op: 'create', data: { ...message(''), audience: { type: 'course', course_id: courseId } } },
        { ref: 'd', op: 'upsert', external_id: 'newsletter-1', data: message('Newsletter (revised)') },
      ],
    });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.results.map((r: { ref: string; status: number }) => [r.ref, r.status]), [['a', 201], ['b', 201], ['c', 422], ['d', 200]]);
    assert.deepEqual(res.body.summary, { total: 4, succeeded: 3, failed: 1 });
    assert.equal(res.body.results[2].error.category, 'validation');
    assert.match(res.body.results[2].error.detail, /\/operations\/2\/data\/subject/);
    assert.equal(res.body.results[3].data.subject, 'Newsletter (revised)');
    const eventsAfter = (await t.database.db.selectFrom('outbox_events').select('id').where('organisation_id', '=', c.org.id).execute()).length;
    assert.equal(eventsAfter - eventsBefore, 3);
  });

  test('only create and upsert: another op is a 422 for the whole request, and nothing runs', async () => {
    const before = await count();
    const res = await bulk({ operations: [{ ref: 'a', op: 'create', data: message('x') }, { ref: 'b', op: 'delete', id: '01a1ffb1-ef6f-770b-ba7c-b487911c9252' }] });
    assert.equal(res.status, 422);
    assert.equal(await count(), before);
  });

  test('limits: 500 run, 501 are a 413; atomic 100 run, 101 are a 413', async () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => ({ ref: `m${i}`, op: 'create', data: message(`M${i}`) }));
    const five = await bulk({ operations: many(500) });
    assert.equal(five.status, 200);
    assert.equal(five.body.summary.succeeded, 500);
    const before = await count();
    const tooMany = await bulk({ operations: many(501) });
    assert.equal(tooMany.status, 413);
    assert.equal(tooMany.body.code, 'bulk.too_many_operations');
    assert.equal((await bulk({ operations: many(100), atomic: true })).body.summary.succeeded, 100);
    assert.equal((await bulk({ operations: many(101), atomic: true })).status, 413);
    assert.equal(await count(), before + 100);
  });

  test('atomic: a failure at the last operation undoes all; a replay returns the recorded response', async () => {
    const before = await count();
    const body = { atomic: true, operations: [{ ref: 'a', op: 'create', data: message('One') }, { ref: 'b', op: 'create', data: message('Two') }, { ref: 'c', op: 'create', data: { subject: 'no body' } }] };
    const res = await bulk(body, 'atomic-fail');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.results.map((r: { status: number; error?: { code: string } }) => [r.status, r.error?.code]), [[409, 'bulk.rolled_back'], [409, 'bulk.rolled_back'], [422, res.body.results[2].error.code]]);
    assert.equal(res.body.summary.succeeded, 0);
    assert.equal(await count(), before);
    const replay = await bulk(body, 'atomic-fail');
    assert.equal(replay.headers['idempotency-replayed'], 'true');
    assert.equal(replay.raw, res.raw);
  });

  test('the Idempotency-Key is required', async () => {
    const res = await t.api.request({ host: c.org.address, key: c.key, method: 'POST', path: '/email_messages/bulk', body: { operations: [] } });
    assert.equal(res.status, 422);
    assert.equal(res.body.code, 'idempotency.key_required');
  });
});
