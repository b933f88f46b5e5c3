// Every change writes exactly one event into the outbox, in the transaction of the change, with identifiers
// and a short summary; a refused or failed change writes none. Driven by the registry's `emits` declarations.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { operations } from '../src/all-operations.ts';
import { eventCatalog } from '../src/events/catalog.ts';
import { startTestApp, type TestContext } from './support/harness.ts';
import type { Caller } from './support/factories.ts';
import { exampleRequest } from './support/examples.ts';

describe('events of every write operation', () => {
  let t: TestContext;
  let c: Caller;
  before(async () => {
    t = await startTestApp();
    c = await t.make.caller();
  });
  after(() => t.close());

  const eventsSince = async (afterId: string | null) => {
    let q = t.database.db.selectFrom('outbox_events').selectAll().where('organisation_id', '=', c.org.id);
    if (afterId) q = q.where('id', '>', afterId);
    return q.orderBy('id').execute();
  };
  const lastEventId = async () => (await eventsSince(null)).at(-1)?.id ?? null;

  for (const op of operations.filter((o) => o.writes)) {
    describe(`${op.method} ${op.path}`, () => {
      test('declares the events it writes, all from the catalog', () => {
        assert.ok(op.emits && op.emits.length > 0, `${op.id} declares no events`);
        for (const type of op.emits) assert.ok(Object.hasOwn(eventCatalog, type), type);
      });

      test('a success writes exactly one of them, with identifiers and a summary', async () => {
        const example = await exampleRequest(t.make, op, c.org);
        const mark = await lastEventId();
        const res = await t.api.request({ method: op.method, path: example.path, host: c.org.address, key: c.key, body: example.body, headers: { 'idempotency-key': `ev-${op.id}` } });
        assert.ok(res.status < 300, `${op.id} answered ${res.status}`);
        const written = await eventsSince(mark);
        assert.equal(written.length, 1, `${op.id} wrote ${written.map((e) => e.type).join(', ') || 'nothing'}`);
        assert.ok(op.emits!.includes(written[0].type as never), written[0].type);
        const data = JSON.parse(written[0].data);
        assert.equal(typeof data.id, 'string');
        assert.ok(typeof data.summary === 'string' && data.summary.length > 0 && data.summary.length <= 200);
        const replay = await t.api.request({ method: op.method, path: example.path, host: c.org.address, key: c.key, body: example.body, headers: { 'idempotency-key': `ev-${op.id}` } });
        assert.equal(replay.headers['idempotency-replayed'], 'true');
        assert.equal((await eventsSince(mark)).length, 1, 'a replay writes no second event');
      });

      if (op.path.includes('{id}')) {
        test('a refused change (unknown id) writes none', async () => {
          const example = await exampleRequest(t.make, op, c.org);
          const mark = await lastEventId();
          const path = op.path.replace('{id}', '01a1ffb1-ef6f-770b-ba7c-b487911c9252');
          const res = await t.api.request({ method: op.method, path, host: c.org.address, key: c.key, body: example.body });
          assert.equal(res.status, 404);
          assert.equal((await eventsSince(mark)).length, 0);
        });
      }
    });
  }

  test('a change that fails after writing rolls its event back with it', async () => {
    // A create records its event through the recorder (a PATCH or DELETE by id, on PostgreSQL, may make it in SQL
    // with the change: test/one-statement-patch.test.ts, test/one-statement-people.test.ts).
    const name = `Rolled back ${crypto.randomUUID()}`;
    const events = t.app.services.events;
    const original = events.record;
    events.record = async (...args) => {
      await original(...args);
      throw new Error('disk full just after the event was written');
    };
    const mark = await lastEventId();
    try {
      const res = await t.api.request({ method: 'POST', path: '/categories', host: c.org.address, key: c.key, body: { name } });
      assert.equal(res.status, 500);
    } finally {
      events.record = original;
    }
    assert.equal((await eventsSince(mark)).length, 0);
    assert.deepEqual(await t.database.db.selectFrom('categories').select('id').where('name', '=', name).execute(), []);
  });

  test('a PATCH that changes nothing writes no event', async () => {
    const s = await t.make.section(c.org, { title: 'Same' });
    const mark = await lastEventId();
    const res = await t.api.request({ method: 'PATCH', path: `/sections/${s.id}`, host: c.org.address, key: c.key, body: { title: 'Same' } });
    assert.equal(res.status, 200);
    assert.equal((await eventsSince(mark)).length, 0);
  });
});
