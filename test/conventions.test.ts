// Shared conventions, proven over every registered operation (as the security suite is): each operation
// gets them from its declaration alone.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { operations } from '../src/all-operations.ts';
import { IDEMPOTENCY_TTL_MS } from '../src/http/idempotency.ts';
import { startTestApp, manualClock, type TestContext } from './support/harness.ts';
import type { Caller } from './support/factories.ts';
import { exampleRequest } from './support/examples.ts';

describe('Idempotency-Key on every operation that takes it', () => {
  const clock = manualClock(new Date('2026-11-03T08:00:00.000Z'));
  let t: TestContext;
  let c: Caller;
  before(async () => {
    t = await startTestApp({ clock });
    c = await t.make.caller();
  });
  after(() => t.close());

  const send = async (op: (typeof operations)[number], key: string | undefined, example?: { path: string; body?: unknown }) => {
    const req = example ?? (await exampleRequest(t.make, op, c.org));
    return t.api.request({ method: op.method, path: req.path, host: c.org.address, key: c.key, body: req.body, headers: key === undefined ? {} : { 'idempotency-key': key } });
  };

  for (const op of operations.filter((o) => o.idempotency)) {
    describe(`${op.method} ${op.path}`, () => {
      test('a replay returns the identical status and body with Idempotency-Replayed: true', async () => {
        const example = await exampleRequest(t.make, op, c.org);
        const key = `replay-${op.id}`;
        const first = await send(op, key, example);
        assert.ok(first.status < 300, `${op.id} example answered ${first.status}: ${first.raw}`);
        assert.equal(first.headers['idempotency-replayed'], undefined);
        const second = await send(op, key, example);
        assert.equal(second.status, first.status);
        assert.equal(second.raw, first.raw);
        assert.equal(second.headers['idempotency-replayed'], 'true');
      });

      test('the same key for a different request is a 409 idempotency.key_reused', async () => {
        const key = `reuse-${op.id}`;
        // A fresh organisation, so that what the example creates (a directory, a name) is not taken yet.
        const fresh = await t.make.caller();
        const example = await exampleRequest(t.make, op, fresh.org);
        const first = await t.api.request({ method: op.method, path: example.path, host: fresh.org.address, key: fresh.key, body: example.body, headers: { 'idempotency-key': key } });
        assert.ok(first.status < 300, `${op.id} answered ${first.status}: ${first.raw}`);
        const section = await t.make.section(fresh.org);
        const other = await t.api.request({ method: 'PATCH', path: `/sections/${section.id}`, host: fresh.org.address, key: fresh.key, body: { title: 'Other' }, headers: { 'idempotency-key': key } });
        assert.equal(other.status, 409);
        assert.equal(other.body.code, 'idempotency.key_reused');
      });

      test('a key of 0 or 256 characters, or with non-ASCII characters, is a 422 naming the header', async () => {
        for (const key of ['', 'k'.repeat(256), 'clé-non-ascii']) {
          const res = await t.app.inject({
            method: op.method,
            url: `/api/v1${(await exampleRequest(t.make, op, c.org)).path}`,
            headers: { host: c.org.address, authorization: `Bearer ${c.key}`, 'idempotency-key': key, 'content-type': 'application/json' },
            payload: JSON.stringify(op.bodyExample ?? {}),
          });
          assert.equal(res.statusCode, 422, `key of ${key.length}`);
          const body = res.json();
          assert.equal(body.code, 'idempotency.key_invalid');
          assert.match(body.detail, /Idempotency-Key/);
        }
      });

      if (op.idempotency === 'required') {
        test('a missing key is a 422 idempotency.key_required', async () => {
          const res = await send(op, undefined);
          assert.equal(res.status, 422);
          assert.equal(res.body.code, 'idempotency.key_required');
        });
      }
    });
  }

  test('20 simultaneous requests with one key make exactly one effect', async () => {
    const course = await t.make.course(c.org);
    const key = 'concurrent-create';
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        t.api.request({ method: 'POST', path: '/sections', host: c.org.address, key: c.key, body: { course_id: course.id, title: 'Once' }, headers: { 'idempotency-key': key } }),
      ),
    );
    const created = results.filter((r) => r.status === 201);
    assert.ok(created.length >= 1);
    assert.ok(results.every((r) => r.status === 201 || (r.status === 409 && r.body.code === 'idempotency.in_progress' && r.headers['retry-after'] === '1')));
    assert.equal(new Set(created.map((r) => r.body.id)).size, 1, 'every 201 is the same section');
    const rows = await t.database.db.selectFrom('sections').select('id').where('course_id', '=', course.id).execute();
    assert.equal(rows.length, 1);
  });

  test('a key sent again after its request finished replays it and changes nothing, even where the retry would now be refused', async () => {
    // On PostgreSQL the retry's look for the record rides with its first statement (src/http/idempotency.ts): the
    // write starts, meets the record there, and is rolled back before it decides anything.
    const course = await t.make.course(c.org);
    const create = () => t.api.request({ method: 'POST', path: '/courses', host: c.org.address, key: c.key, body: { fullname: 'Once only', shortname: `ONCE-${course.id.slice(-8)}` }, headers: { 'idempotency-key': `retry-create-${course.id}` } });
    const first = await create();
    assert.equal(first.status, 201);
    const again = await create();
    assert.equal(again.status, 201);
    assert.equal(again.headers['idempotency-replayed'], 'true');
    assert.equal(again.raw, first.raw);
    assert.equal((await t.database.db.selectFrom('courses').select('id').where('fullname', '=', 'Once only').where('organisation_id', '=', c.org.id).execute()).length, 1);

    // A delete retried: the section is gone, yet the answer is the recorded 204, not a 409 or a 404.
    const section = await t.make.section(c.org);
    const remove = () => t.api.request({ method: 'DELETE', path: `/sections/${section.id}`, host: c.org.address, key: c.key, headers: { 'idempotency-key': `retry-delete-${section.id}` } });
    assert.equal((await remove()).status, 204);
    const retried = await remove();
    assert.equal(retried.status, 204);
    assert.equal(retried.headers['idempotency-replayed'], 'true');
    const deletedEvents = await t.database.db.selectFrom('outbox_events').select('id').where('type', '=', 'section.deleted').where('data', 'like', `%"id":"${section.id}"%`).execute();
    assert.equal(deletedEvents.length, 1);
  });

  test('a failed request records nothing: the same key may be sent again, and then takes effect', async () => {
    const key = 'after-failure';
    const missing = await t.api.request({ method: 'PATCH', path: '/sections/01a1ffb1-ef6f-770b-ba7c-b487911c9252', host: c.org.address, key: c.key, body: { title: 'x' }, headers: { 'idempotency-key': key } });
    assert.equal(missing.status, 404);
    const s = await t.make.section(c.org);
    const ok = await t.api.request({ method: 'PATCH', path: `/sections/${s.id}`, host: c.org.address, key: c.key, body: { title: 'x' }, headers: { 'idempotency-key': key } });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers['idempotency-replayed'], undefined);
  });

  test('a 500 leaves neither a record nor an effect', async () => {
    const s = await t.make.section(c.org, { title: 'Before' });
    const key = 'crash';
    const { sectionsRepository } = await import('../src/domain/sections/sections.repository.ts');
    const original = sectionsRepository.updateLiveIfChanged;
    sectionsRepository.updateLiveIfChanged = async (...args) => {
      await original(...args);
      throw new Error('crash after the write');
    };
    try {
      const res = await t.api.request({ method: 'PATCH', path: `/sections/${s.id}`, host: c.org.address, key: c.key, body: { title: 'After' }, headers: { 'idempotency-key': key } });
      assert.equal(res.status, 500);
    } finally {
      sectionsRepository.updateLiveIfChanged = original;
    }
    const row = await t.database.db.selectFrom('sections').select('title').where('id', '=', s.id).executeTakeFirstOrThrow();
    assert.equal(row.title, 'Before');
    const records = await t.database.db.selectFrom('idempotency_records').selectAll().where('idempotency_key', '=', key).execute();
    assert.equal(records.length, 0);
  });

  test('keys are scoped to the credential, and expire after 24 hours', async () => {
    const s = await t.make.section(c.org);
    const other = await t.make.caller({ org: c.org });
    const key = 'scoped';
    const patch = (caller: Caller, title: string) =>
      t.api.request({ method: 'PATCH', path: `/sections/${s.id}`, host: caller.org.address, key: caller.key, body: { title }, headers: { 'idempotency-key': key } });
    assert.equal((await patch(c, 'A')).status, 200);
    const theirs = await patch(other, 'B');
    assert.equal(theirs.status, 200);
    assert.equal(theirs.headers['idempotency-replayed'], undefined);
    assert.equal((await patch(c, 'C')).status, 409);
    clock.advance(IDEMPOTENCY_TTL_MS + 1);
    const fresh = await patch(c, 'C');
    assert.equal(fresh.status, 200);
    assert.equal(fresh.body.title, 'C');
    // The background purge removes what has expired, and nothing else.
    const { idempotencyRepository } = await import('../src/http/idempotency.repository.ts');
    const purged = await idempotencyRepository.purgeExpired(t.database.db, clock.now().toISOString());
    assert.ok(purged >= 1);
    const left = await t.database.db.selectFrom('idempotency_records').select('credential_id').where('idempotency_key', '=', key).execute();
    assert.deepEqual(left.map((r) => r.credential_id), [c.keyId], 'only the fresh record remains');
  });
});

describe('list parameters and Service-Version on every operation', () => {
  let t: TestContext;
  let c: Caller;
  before(async () => {
    t = await startTestApp();
    c = await t.make.caller();
  });
  after(() => t.close());

  const listOperations = operations.filter((o) => o.method === 'GET' && (o.query as { properties?: Record<string, unknown> } | undefined)?.properties?.limit);

  for (const op of listOperations) {
    test(`${op.path}: pages with limit and cursor, and refuses bad list parameters with a 422 naming them`, async () => {
      const properties = (op.query as unknown as { properties: Record<string, unknown> }).properties;
      const collection = op.path.split('/')[1];
      if (op.path.endsWith('/deletions')) {
        for (let i = 0; i < 3; i++) {
          const r = await t.make.resourceFor[collection](c.org);
          await t.api.request({ host: c.org.address, key: c.key, method: 'DELETE', path: `/${collection}/${r.id}` });
        }
      } else {
        for (let i = 0; i < 3; i++) await t.make.resourceFor[collection](c.org);
      }
      // A list under one resource (`/wiki_pages/{id}/versions`) lists that of the example resource, which has several.
      const listPath = op.path.includes('{') ? (await exampleRequest(t.make, op, c.org)).path : op.path;
      const first = await t.api.request({ host: c.org.address, key: c.key, path: `${listPath}?limit=1` });
      assert.equal(first.status, 200);
      assert.equal(first.body.data.length, 1);
      assert.equal(first.body.page.has_more, true);
      const second = await t.api.request({ host: c.org.address, key: c.key, path: `${listPath}?limit=1&cursor=${encodeURIComponent(first.body.page.next_cursor)}` });
      assert.equal(second.status, 200);
      // Roles are identified by key.
      const identity = (item: { id?: string; key?: string }) => item.id ?? item.key;
      assert.notEqual(identity(second.body.data[0]), identity(first.body.data[0]));
      const bad = ['limit=0', 'limit=201', 'limit=abc', 'cursor=forged', ...(properties.updated_since ? ['updated_since=yesterday'] : []), ...(properties.since ? ['since=yesterday'] : [])];
      for (const q of bad) {
        const res = await t.api.request({ host: c.org.address, key: c.key, path: `${listPath}?${q}` });
        assert.equal(res.status, 422, `${op.path}?${q}`);
        assert.equal(res.body.code, 'validation.invalid_parameter');
        assert.match(res.body.detail, new RegExp(`\`${q.split('=')[0]}\``));
      }
    });
  }

  for (const op of operations) {
    test(`${op.method} ${op.path}: a malformed Service-Version is a 422 and changes nothing`, async () => {
      const example = await exampleRequest(t.make, op, c.org);
      const res = await t.api.request({ method: op.method, path: example.path, host: c.org.address, key: c.key, body: example.body, headers: { 'service-version': '2026-13-45', 'idempotency-key': `v-${op.id}` } });
      assert.equal(res.status, 422);
      assert.equal(res.body.code, 'versioning.invalid_revision');
      const records = await t.database.db.selectFrom('idempotency_records').select('idempotency_key').where('idempotency_key', '=', `v-${op.id}`).execute();
      assert.equal(records.length, 0);
    });
  }
});
