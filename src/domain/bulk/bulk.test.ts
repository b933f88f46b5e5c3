// The bulk engine, through the lesson pages bulk endpoint (spec operation 9): every op, per-operation
// outcomes, envelope errors and limits, atomic requests, idempotency. Runs on both databases.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestApp, type TestContext } from '../../../test/support/harness.ts';
import type { Caller } from '../../../test/support/factories.ts';

const UNKNOWN = '01a1ffb1-ef6f-770b-ba7c-b487911c9252';

interface Result {
  ref: string;
  status: number;
  data?: { id: string; title: string; external_id: string | null };
  error?: { code: string; category: string; detail: string };
}

describe('bulk lesson pages (POST /lesson_pages/bulk, operation 9)', () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  /** A fresh organisation with a lesson, so counts of rows and events are the test's own. */
  async function setup() {
    const c = await t.make.caller();
    const lesson = await t.make.lesson(c.org);
    return { c, lesson };
  }

  const bulk = (c: Caller, body: unknown, key: string = randomUUID()) =>
    t.api.request({ host: c.org.address, key: c.key, method: 'POST', path: '/lesson_pages/bulk', body, headers: { 'idempotency-key': key } });
  const pagesOf = (lessonId: string) => t.database.db.selectFrom('lesson_pages').selectAll().where('lesson_id', '=', lessonId).orderBy('sort_key').execute();
  const eventsOf = (c: Caller) => t.database.db.selectFrom('outbox_events').select(['type', 'data']).where('organisation_id', '=', c.org.id).where('type', 'like', 'lesson_page.%').orderBy('id').execute();
  const recordOf = (key: string) => t.database.db.selectFrom('idempotency_records').select('idempotency_key').where('idempotency_key', '=', key).execute();
  const creates = (lessonId: string, n: number, prefix = 'p') =>
    Array.from({ length: n }, (_, i) => ({ ref: `${prefix}${i}`, op: 'create', data: { lesson_id: lessonId, title: `${prefix} ${i}` } }));

  test('every op: create, update, upsert (creating and updating), delete, by id and by external_id; results in request order', async () => {
    const { c, lesson } = await setup();
    const [p1, p2, p3] = [await t.make.lessonPage(c.org, { lesson_id: lesson.id }), await t.make.lessonPage(c.org, { lesson_id: lesson.id }), await t.make.lessonPage(c.org, { lesson_id: lesson.id })];
    const eventsBefore = (await eventsOf(c)).length;
    const res = await bulk(c, {
      operations: [
        { ref: 'c1', op: 'create', data: { lesson_id: lesson.id, title: 'New' } },
        { ref: 'c2', op: 'create', external_id: 'c2-ext', data: { lesson_id: lesson.id, title: 'New essay', page_type: 'essay' } },
        { ref: 'u1', op: 'update', id: p1.id, data: { title: 'P1 renamed' } },
        { ref: 'u2', op: 'update', external_id: p2.external_id, data: { title: 'P2 renamed' } },
        { ref: 's1', op: 'upsert', external_id: 's-new', data: { lesson_id: lesson.id, title: 'Upserted' } },
        { ref: 's2', op: 'upsert', external_id: p3.external_id, data: { lesson_id: lesson.id, title: 'P3 upserted' } },
        { ref: 'd1', op: 'delete', id: p1.id },
        { ref: 'd2', op: 'delete', external_id: p2.external_id },
      ],
    });
    assert.equal(res.status, 200);
    const results: Result[] = res.body.results;
    assert.deepEqual(results.map((r) => [r.ref, r.status]), [['c1', 201], ['c2', 201], ['u1', 200], ['u2', 200], ['s1', 201], ['s2', 200], ['d1', 204], ['d2', 204]]);
    assert.deepEqual(res.body.summary, { total: 8, succeeded: 8, failed: 0 });
    assert.equal(results[1].data!.external_id, 'c2-ext');
    assert.equal(results[2].data!.title, 'P1 renamed');
    assert.equal(results[5].data!.id, p3.id);
    assert.ok(results.slice(6).every((r) => r.data === undefined && r.error === undefined));
    const live = (await pagesOf(lesson.id)).filter((p) => p.deleted_at === null).map((p) => p.title);
    assert.deepEqual(live, ['P3 upserted', 'New', 'New essay', 'Upserted']);
    const events = (await eventsOf(c)).slice(eventsBefore).map((e) => e.type);
    assert.deepEqual(events, ['lesson_page.created', 'lesson_page.created', 'lesson_page.updated', 'lesson_page.updated', 'lesson_page.created', 'lesson_page.updated', 'lesson_page.deleted', 'lesson_page.deleted']);
  });

  test('mixed successes and failures: each failure reports its own status and error, changes nothing, and leaves the others alone', async () => {
    const { c, lesson } = await setup();
    const taken = await t.make.lessonPage(c.org, { lesson_id: lesson.id, title: 'Taken' });
    const gone = await t.make.lessonPage(c.org, { lesson_id: lesson.id, title: 'Gone' });
    await t.app.services.lessonPages.remove(t.database.db, c.org.id, { id: gone.id });
    const wiki = await t.make.activity(c.org);
    const eventsBefore = (await eventsOf(c)).length;
    const res = await bulk(c, {
      operations: [
        { ref: 'ok-1', op: 'create', data: { lesson_id: lesson.id, title: 'First' } },
        { ref: 'unknown', op: 'update', id: UNKNOWN, data: { title: 'x' } },
        { ref: 'invalid', op: 'create', data: { lesson_id: lesson.id, title: '', colour: 'red' } },
        // A unique violation in the database: on PostgreSQL the transaction carries on only thanks to the savepoint.
        { ref: 'taken', op: 'create', external_id: taken.external_id!, data: { lesson_id: lesson.id, title: 'Clash' } },
        { ref: 'deleted', op: 'update', id: gone.id, data: { title: 'Back' } },
        { ref: 'wiki', op: 'create', data: { lesson_id: wiki.id, title: 'In a wiki' } },
        { ref: 'ok-2', op: 'create', data: { lesson_id: lesson.id, title: 'Second' } },
      ],
    });
    assert.equal(res.status, 200);
    const byRef = Object.fromEntries((res.body.results as Result[]).map((r) => [r.ref, r]));
    assert.deepEqual(res.body.results.map((r: Result) => r.ref), ['ok-1', 'unknown', 'invalid', 'taken', 'deleted', 'wiki', 'ok-2']);
    assert.deepEqual(res.body.summary, { total: 7, succeeded: 2, failed: 5 });
    assert.equal(byRef['ok-1'].status, 201);
    assert.equal(byRef['ok-2'].status, 201);
    assert.deepEqual(byRef.unknown.error, { code: 'lesson_page.not_found', category: 'not_found', detail: `No lesson page ${UNKNOWN} in this organisation.` });
    assert.equal(byRef.unknown.status, 404);
    assert.equal(byRef.invalid.status, 422);
    assert.equal(byRef.invalid.error!.code, 'validation.invalid_body');
    assert.match(byRef.invalid.error!.detail, /\/operations\/2\/data\/colour: /);
    assert.match(byRef.invalid.error!.detail, /\/operations\/2\/data\/title: /);
    assert.deepEqual([byRef.taken.status, byRef.taken.error!.code, byRef.taken.error!.category], [409, 'resource.external_id_taken', 'conflict']);
    assert.deepEqual([byRef.deleted.status, byRef.deleted.error!.code], [409, 'lesson_page.deleted']);
    assert.equal(byRef.wiki.status, 422);
    assert.match(byRef.wiki.error!.detail, /^\/operations\/5\/data\/lesson_id: Activity .* is a wiki, not a lesson\.$/);
    assert.ok((res.body.results as Result[]).every((r) => (r.status < 300) === (r.error === undefined)));
    assert.deepEqual((await pagesOf(lesson.id)).map((p) => p.title), ['Taken', 'Gone', 'First', 'Second']);
    assert.deepEqual((await eventsOf(c)).slice(eventsBefore).map((e) => e.type), ['lesson_page.created', 'lesson_page.created']);
  });

  test('data is validated as the single operations validate their bodies: the same code, category and fields', async () => {
    const { c, lesson } = await setup();
    const page = await t.make.lessonPage(c.org, { lesson_id: lesson.id });
    const cases: Array<{ op: 'create' | 'update'; data: Record<string, unknown> }> = [
      { op: 'create', data: { lesson_id: lesson.id, title: 'x'.repeat(256), page_type: 'quiz', answers: 'none' } },
      { op: 'create', data: { title: 'No lesson', after_page_id: 'nope' } },
      { op: 'create', data: { lesson_id: lesson.id, title: 'TF', page_type: 'truefalse', answers: [{ text: 'True', score: '1' }] } },
      { op: 'create', data: { lesson_id: lesson.id, title: 'TF', page_type: 'truefalse', answers: [{ text: 'True' }] } },
      { op: 'create', data: { lesson_id: UNKNOWN, title: 'Nowhere' } },
      { op: 'update', data: { title: null, contents: { format: 'html' } } },
      { op: 'update', data: { page_type: 'matching', answers: [{ text: 'a', response: 'b' }, { text: 'c' }] } },
    ];
    for (const { op, data } of cases) {
      const single =
        op === 'create'
          ? await t.api.request({ host: c.org.address, key: c.key, method: 'POST', path: '/lesson_pages', body: data })
          : await t.api.request({ host: c.org.address, key: c.key, method: 'PATCH', path: `/lesson_pages/${page.id}`, body: data });
      assert.equal(single.status, 422, JSON.stringify(data));
      const res = await bulk(c, { operations: [{ ref: 'r', op, ...(op === 'update' ? { id: page.id } : {}), data }] });
      const [result] = res.body.results as Result[];
      assert.equal(result.status, single.status);
      assert.equal(result.error!.code, single.body.code);
      assert.equal(result.error!.category, single.body.category);
      const expected = single.body.errors.map((e: { path: string; detail: string }) => `/operations/0/data${e.path}: ${e.detail}`).join(' ');
      assert.equal(result.error!.detail, expected, JSON.stringify(data));
    }
    assert.equal((await pagesOf(lesson.id)).length, 1);
  });

  test('what each op needs of id, external_id and data: a violation fails that operation alone (422 naming the member)', async () => {
    const { c, lesson } = await setup();
    const page = await t.make.lessonPage(c.org, { lesson_id: lesson.id });
    const data = { lesson_id: lesson.id, title: 'T' };
    const cases: Array<[unknown, string]> = [
      [{ op: 'update', data: { title: 'x' } }, '/operations/0/id'],
      [{ op: 'update', id: page.id, external_id: page.external_id, data: { title: 'x' } }, '/operations/0/external_id'],
      [{ op: 'delete' }, '/operations/0/id'],
      [{ op: 'delete', id: page.id, data: {} }, '/operations/0/data'],
      [{ op: 'upsert', data }, '/operations/0/external_id'],
      [{ op: 'upsert', id: page.id, external_id: 'e', data }, '/operations/0/id'],
      [{ op: 'create', id: page.id, data }, '/operations/0/id'],
      [{ op: 'create', external_id: 'a', data: { ...data, external_id: 'b' } }, '/operations/0/external_id'],
      [{ op: 'create' }, '/operations/0/data'],
      [{ op: 'update', id: page.id }, '/operations/0/data'],
    ];
    for (const [item, pointer] of cases) {
      const res = await bulk(c, { operations: [{ ref: 'r', ...(item as object) }, { ref: 'fine', op: 'update', id: page.id, data: { title: 'Still runs' } }] });
      assert.equal(res.status, 200);
      const [bad, fine] = res.body.results as Result[];
      assert.equal(bad.status, 422, JSON.stringify(item));
      assert.equal(bad.error!.code, 'validation.invalid_body');
      assert.ok(bad.error!.detail.startsWith(`${pointer}: `), `${JSON.stringify(item)}: ${bad.error!.detail}`);
      assert.equal(fine.status, 200);
    }
    assert.equal((await pagesOf(lesson.id)).length, 1);
  });

  describe('a malformed envelope is a 422 and nothing runs', () => {
    const envelopes: Array<[string, (lessonId: string) => unknown, string[]]> = [
      ['no operations', () => ({}), ['/operations']],
      ['an empty list', () => ({ operations: [] }), ['/operations']],
      ['an unknown op', (l) => ({ operations: [...creates(l, 1), { ref: 'x', op: 'destroy', data: {} }] }), ['/operations/1/op']],
      ['a duplicate ref', (l) => ({ operations: [...creates(l, 2), { ref: 'p0', op: 'create', data: { lesson_id: l, title: 'again' } }] }), ['/operations/2/ref']],
      ['a ref of 101 characters', (l) => ({ operations: [{ ref: 'r'.repeat(101), op: 'create', data: { lesson_id: l, title: 't' } }] }), ['/operations/0/ref']],
      ['an empty ref', (l) => ({ operations: [{ ref: '', op: 'create', data: { lesson_id: l, title: 't' } }] }), ['/operations/0/ref']],
      ['an unknown member', (l) => ({ operations: [{ ref: 'a', op: 'create', data: { lesson_id: l, title: 't' }, colour: 'red' }] }), ['/operations/0/colour']],
      ['an id that is no UUID', () => ({ operations: [{ ref: 'a', op: 'delete', id: 'page-1' }] }), ['/operations/0/id']],
      ['an external_id of 256 characters', () => ({ operations: [{ ref: 'a', op: 'delete', external_id: 'e'.repeat(256) }] }), ['/operations/0/external_id']],
      ['data that is no object', () => ({ operations: [{ ref: 'a', op: 'create', data: [] }] }), ['/operations/0/data']],
      ['atomic that is no boolean', (l) => ({ operations: creates(l, 1), atomic: 'yes' }), ['/atomic']],
    ];
    for (const [name, body, expected] of envelopes) {
      test(name, async () => {
        const { c, lesson } = await setup();
        const key = randomUUID();
        const res = await bulk(c, body(lesson.id), key);
        assert.equal(res.status, 422);
        assert.equal(res.body.code, 'validation.invalid_body');
        assert.deepEqual(res.body.errors.map((e: { path: string }) => e.path), expected);
        assert.equal((await pagesOf(lesson.id)).length, 0);
        assert.equal((await eventsOf(c)).length, 0);
        assert.equal((await recordOf(key)).length, 0, 'a refused request records nothing');
      });
    }

    test('a missing Idempotency-Key is a 422', async () => {
      const { c, lesson } = await setup();
      const res = await t.api.request({ host: c.org.address, key: c.key, method: 'POST', path: '/lesson_pages/bulk', body: { operations: creates(lesson.id, 1) } });
      assert.equal(res.status, 422);
      assert.equal(res.body.code, 'idempotency.key_required');
    });
  });

  describe('limits (spec: Limits)', () => {
    test('500 operations run (200); 501 are a 413 bulk.too_many_operations and nothing runs', async () => {
      const { c, lesson } = await setup();
      const res = await bulk(c, { operations: creates(lesson.id, 500) });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.summary, { total: 500, succeeded: 500, failed: 0 });
      assert.ok((res.body.results as Result[]).every((r, i) => r.ref === `p${i}` && r.status === 201));
      const pages = await pagesOf(lesson.id);
      assert.deepEqual(pages.map((p) => p.title), Array.from({ length: 500 }, (_, i) => `p ${i}`), 'appended in request order');
      assert.equal((await eventsOf(c)).length, 500);

      const other = await t.make.lesson(c.org);
      const key = randomUUID();
      const tooMany = await bulk(c, { operations: creates(other.id, 501) }, key);
      assert.equal(tooMany.status, 413);
      assert.equal(tooMany.body.code, 'bulk.too_many_operations');
      assert.equal(tooMany.body.category, 'quota');
      assert.match(tooMany.body.detail, /501 operations; at most 500/);
      assert.equal((await pagesOf(other.id)).length, 0);
      assert.equal((await eventsOf(c)).length, 500);
      assert.equal((await recordOf(key)).length, 0);
    });

    test('atomic: 100 operations run (200); 101 are a 413 and nothing runs', async () => {
      const { c, lesson } = await setup();
      const res = await bulk(c, { operations: creates(lesson.id, 100), atomic: true });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.summary, { total: 100, succeeded: 100, failed: 0 });
      assert.equal((await pagesOf(lesson.id)).length, 100);
      const other = await t.make.lesson(c.org);
      const tooMany = await bulk(c, { operations: creates(other.id, 101), atomic: true });
      assert.equal(tooMany.status, 413);
      assert.equal(tooMany.body.code, 'bulk.too_many_operations');
      assert.match(tooMany.body.detail, /at most 100 are allowed in an atomic request/);
      assert.equal((await pagesOf(other.id)).length, 0);
      assert.equal((await eventsOf(c)).length, 100);
    });
  });

  describe('atomic requests', () => {
    test('failing at the last operation: nothing is written, no event; the others report 409 bulk.rolled_back', async () => {
      const { c, lesson } = await setup();
      const taken = await t.make.lessonPage(c.org, { lesson_id: lesson.id });
      const eventsBefore = (await eventsOf(c)).length;
      const operations = [...creates(lesson.id, 99), { ref: 'last', op: 'create', external_id: taken.external_id, data: { lesson_id: lesson.id, title: 'Clash' } }];
      const res = await bulk(c, { operations, atomic: true });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.summary, { total: 100, succeeded: 0, failed: 100 });
      const results = res.body.results as Result[];
      assert.deepEqual(results.map((r) => r.ref), operations.map((o) => o.ref));
      assert.deepEqual([results[99].status, results[99].error!.code], [409, 'resource.external_id_taken']);
      for (const r of results.slice(0, 99)) {
        assert.equal(r.status, 409);
        assert.deepEqual(r.error, { code: 'bulk.rolled_back', category: 'conflict', detail: 'Undone: operation "last" failed, and the atomic request was rolled back.' });
        assert.equal(r.data, undefined);
      }
      assert.equal((await pagesOf(lesson.id)).length, 1, 'only the page that was there before');
      assert.equal((await eventsOf(c)).length, eventsBefore);
    });

    test('failing in the middle: later operations do not run; every operation but the failing one reports bulk.rolled_back', async () => {
      const { c, lesson } = await setup();
      const page = await t.make.lessonPage(c.org, { lesson_id: lesson.id, title: 'Before' });
      const res = await bulk(c, {
        atomic: true,
        operations: [
          { ref: 'rename', op: 'update', id: page.id, data: { title: 'After' } },
          { ref: 'bad', op: 'create', data: { lesson_id: lesson.id, title: 'Q', page_type: 'truefalse' } },
          { ref: 'delete', op: 'delete', id: page.id },
        ],
      });
      assert.equal(res.status, 200);
      const [rename, bad, del] = res.body.results as Result[];
      assert.match(rename.error!.detail, /^Undone: operation "bad" failed/);
      assert.deepEqual([bad.status, bad.error!.code], [422, 'validation.invalid_body']);
      assert.equal(bad.error!.detail, '/operations/1/data/answers: A truefalse page takes exactly 2 answers; it has 0.');
      assert.match(del.error!.detail, /^Not run: operation "bad" failed first/);
      const [row] = await pagesOf(lesson.id);
      assert.deepEqual([row.title, row.deleted_at], ['Before', null]);
    });

    test('a valid atomic request applies every op', async () => {
      const { c, lesson } = await setup();
      const page = await t.make.lessonPage(c.org, { lesson_id: lesson.id, title: 'Old' });
      const res = await bulk(c, {
        atomic: true,
        operations: [
          { ref: 'a', op: 'create', data: { lesson_id: lesson.id, title: 'A' } },
          { ref: 'b', op: 'update', id: page.id, data: { title: 'Renamed' } },
          { ref: 'c', op: 'upsert', external_id: 'c', data: { lesson_id: lesson.id, title: 'C' } },
        ],
      });
      assert.deepEqual(res.body.results.map((r: Result) => r.status), [201, 200, 201]);
      assert.deepEqual((await pagesOf(lesson.id)).map((p) => p.title), ['Renamed', 'A', 'C']);
    });
  });

  describe('idempotency', () => {
    test('a replay returns the identical bytes with Idempotency-Replayed: true and writes nothing more', async () => {
      const { c, lesson } = await setup();
      const key = randomUUID();
      const body = { operations: [...creates(lesson.id, 3), { ref: 'bad', op: 'update', id: UNKNOWN, data: { title: 'x' } }] };
      const first = await bulk(c, body, key);
      assert.equal(first.status, 200);
      assert.equal(first.headers['idempotency-replayed'], undefined);
      const second = await bulk(c, body, key);
      assert.equal(second.status, 200);
      assert.equal(second.raw, first.raw);
      assert.equal(second.headers['idempotency-replayed'], 'true');
      assert.equal((await pagesOf(lesson.id)).length, 3);
      assert.equal((await eventsOf(c)).length, 3);
      const other = await bulk(c, { operations: creates(lesson.id, 1) }, key);
      assert.equal(other.status, 409);
      assert.equal(other.body.code, 'idempotency.key_reused');
    });

    test('two simultaneous requests with one key: one runs; the other is a 409 in_progress or a replay', async () => {
      const { c, lesson } = await setup();
      const key = randomUUID();
      const body = { operations: creates(lesson.id, 50) };
      const [a, b] = await Promise.all([bulk(c, body, key), bulk(c, body, key)]);
      const statuses = [a.status, b.status].sort();
      assert.ok(statuses[0] === 200, `statuses ${statuses}`);
      for (const r of [a, b]) {
        if (r.status === 409) {
          assert.equal(r.body.code, 'idempotency.in_progress');
          assert.equal(r.headers['retry-after'], '1');
        }
      }
      const ran = [a, b].filter((r) => r.status === 200 && r.headers['idempotency-replayed'] === undefined);
      assert.equal(ran.length, 1, 'exactly one ran');
      const replayed = [a, b].find((r) => r.headers['idempotency-replayed'] === 'true');
      if (replayed) assert.equal(replayed.raw, ran[0].raw);
      assert.equal((await pagesOf(lesson.id)).length, 50);
      assert.equal((await eventsOf(c)).length, 50);
    });
  });

  test('an unexpected failure in one operation is a 500 for the whole request: nothing is written or recorded', async () => {
    const { c, lesson } = await setup();
    const page = await t.make.lessonPage(c.org, { lesson_id: lesson.id });
    const eventsBefore = (await eventsOf(c)).length;
    const service = t.app.services.lessonPages;
    const original = service.remove;
    service.remove = async () => {
      throw new Error('disk on fire');
    };
    const key = randomUUID();
    try {
      const res = await bulk(c, { operations: [...creates(lesson.id, 2), { ref: 'boom', op: 'delete', id: page.id }] }, key);
      assert.equal(res.status, 500);
      assert.equal(res.body.code, 'internal.error');
      assert.doesNotMatch(res.raw, /disk on fire/);
    } finally {
      service.remove = original;
    }
    assert.equal((await pagesOf(lesson.id)).length, 1);
    assert.equal((await eventsOf(c)).length, eventsBefore);
    assert.equal((await recordOf(key)).length, 0);
  });
});
