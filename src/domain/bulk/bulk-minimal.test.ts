// `Prefer: return=minimal` (RFC 7240) on the bulk endpoints: each success's `data` is only the record's id,
// everything else of the answer as without it; `Preference-Applied` says so; without the preference (or with
// `return=representation`, or one we cannot read) the answer is the full one, byte for byte; the preference is
// part of the Idempotency-Key's request, so a replay answers the recorded minimal body and another preference
// under the same key is refused. Runs on both databases, through enrolments, lesson pages and users.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestApp, type TestContext } from '../../../test/support/harness.ts';
import type { Caller } from '../../../test/support/factories.ts';
import type { ApiResponse } from '../../../test/support/api-client.ts';

const UNKNOWN = '01a1ffb1-ef6f-770b-ba7c-b487911c9252';

interface Result {
  ref: string;
  status: number;
  data?: Record<string, unknown> & { id: string };
  unchanged?: true;
  error?: { code: string; category: string; detail: string };
}
interface BulkBody {
  summary: { total: number; succeeded: number; failed: number };
  results: Result[];
}

/** What the minimal answer must be, given the full answer to the same request: each `data` cut to its id. */
const cutToIds = (full: BulkBody): BulkBody => ({ ...full, results: full.results.map((r) => (r.data === undefined ? r : { ...r, data: { id: r.data.id } })) });

describe('bulk endpoints with Prefer: return=minimal', () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t?.close());

  const bulk = (c: Caller, collection: string, body: unknown, opts: { prefer?: string; key?: string } = {}) =>
    t.api.request({
      host: c.org.address,
      key: c.key,
      method: 'POST',
      path: `/${collection}/bulk`,
      body,
      headers: { 'idempotency-key': opts.key ?? randomUUID(), ...(opts.prefer !== undefined ? { prefer: opts.prefer } : {}) },
    });
  const applied = (res: ApiResponse) => res.headers['preference-applied'];
  const enrolmentIdOf = async (c: Caller, externalId: string) =>
    (await t.database.db.selectFrom('enrolments').select('id').where('organisation_id', '=', c.org.id).where('external_id', '=', externalId).executeTakeFirstOrThrow()).id;

  /** An organisation with a course, its manual method, a person enrolled as `bob`, and three people to enrol. */
  async function enrolmentSetup() {
    const c = await t.make.caller();
    const course = await t.make.course(c.org);
    const method = await t.make.enrolmentMethod(c.org, { course_id: course.id });
    const data = (userId: string, extra: Record<string, unknown> = {}) => ({ course_id: course.id, user_id: userId, enrolment_method_id: method.id, ...extra });
    const bob = await t.make.person(c.org, { roles: [] });
    const existing = (await t.api.request({ host: c.org.address, key: c.key, method: 'POST', path: '/enrolments', body: data(bob.id, { external_id: 'bob' }) })).body as { id: string };
    const people = [await t.make.person(c.org, { roles: [] }), await t.make.person(c.org, { roles: [] }), await t.make.person(c.org, { roles: [] })];
    const roster = people.map((p, i) => ({ ref: `r${i}`, op: 'upsert', external_id: `sis-${i}`, data: data(p.id) }));
    // Two operations that fail the same way however often they are sent.
    const failing = [
      { ref: 'dup', op: 'create', data: data(people[0].id) },
      { ref: 'bad', op: 'create', data: data(people[1].id, { role: 'wizard' }) },
    ];
    return { c, data, existing, people, roster, failing };
  }

  describe('POST /enrolments/bulk', () => {
    test('creates, upserts, updates, deletes and failures: successes carry only their id, the rest as without the preference', async () => {
      const { c, data, existing, roster, failing } = await enrolmentSetup();
      const extra = await t.make.person(c.org, { roles: [] });
      const res = await bulk(c, 'enrolments', {
        operations: [
          ...roster,
          { ref: 'new', op: 'create', external_id: 'new', data: data(extra.id) },
          { ref: 'patch', op: 'update', external_id: 'bob', data: { role: 'teacher' } },
          ...failing,
          { ref: 'gone', op: 'delete', id: UNKNOWN },
        ],
      }, { prefer: 'return=minimal' });
      assert.equal(res.status, 200);
      assert.equal(applied(res), 'return=minimal');
      const body = res.body as BulkBody;
      assert.deepEqual(body.summary, { total: 8, succeeded: 5, failed: 3 });
      const ids = [await enrolmentIdOf(c, 'sis-0'), await enrolmentIdOf(c, 'sis-1'), await enrolmentIdOf(c, 'sis-2'), await enrolmentIdOf(c, 'new')];
      assert.deepEqual(body.results.slice(0, 5), [
        { ref: 'r0', status: 201, data: { id: ids[0] } },
        { ref: 'r1', status: 201, data: { id: ids[1] } },
        { ref: 'r2', status: 201, data: { id: ids[2] } },
        { ref: 'new', status: 201, data: { id: ids[3] } },
        { ref: 'patch', status: 200, data: { id: existing.id } },
      ]);
      assert.deepEqual(body.results.slice(5).map((r) => [r.ref, r.status, r.error?.code, 'data' in r]), [
        ['dup', 409, 'enrolment.exists', false],
        ['bad', 422, 'validation.invalid_body', false],
        ['gone', 404, 'enrolment.not_found', false],
      ]);
      // The update happened as without the preference: only the answer is shorter.
      const row = await t.database.db.selectFrom('enrolments').select('role').where('id', '=', existing.id).executeTakeFirstOrThrow();
      assert.equal(row.role, 'teacher');

      // A changed roster line (an upsert that updates) and a delete under the preference: an id, and no data.
      const changed = await bulk(c, 'enrolments', { operations: [{ ...roster[1], data: { ...roster[1].data, status: 'suspended' } }, { ref: 'end', op: 'delete', external_id: 'new' }] }, { prefer: 'return=minimal' });
      assert.deepEqual(changed.body.results, [{ ref: 'r1', status: 200, data: { id: ids[1] } }, { ref: 'end', status: 204 }]);
      assert.equal(applied(changed), 'return=minimal');
    });

    test('unchanged upserts and failures: the minimal answer is the full one with each data cut to its id; representation and no header answer the same full bytes', async () => {
      const { c, roster, failing } = await enrolmentSetup();
      assert.equal((await bulk(c, 'enrolments', { operations: roster })).status, 200);
      const resend = { operations: [...roster, ...failing] };
      const plain = await bulk(c, 'enrolments', resend);
      const representation = await bulk(c, 'enrolments', resend, { prefer: 'return=representation' });
      const minimal = await bulk(c, 'enrolments', resend, { prefer: 'return=minimal' });
      for (const res of [plain, representation, minimal]) assert.equal(res.status, 200);
      // The full answer: every unchanged upsert with its whole record, and no Preference-Applied.
      const full = plain.body as BulkBody;
      assert.deepEqual(full.results.map((r) => [r.status, r.unchanged, typeof r.data?.course_id]), [[200, true, 'string'], [200, true, 'string'], [200, true, 'string'], [409, undefined, 'undefined'], [422, undefined, 'undefined']]);
      assert.equal(applied(plain), undefined);
      assert.equal(applied(representation), undefined);
      assert.equal(representation.raw, plain.raw);
      // The minimal one: the same bytes with only `data` cut (`unchanged`, `error`, `summary` kept).
      assert.equal(applied(minimal), 'return=minimal');
      assert.equal(minimal.raw, JSON.stringify(cutToIds(full)));
      assert.ok(minimal.raw.length < plain.raw.length / 2, `${minimal.raw.length} bytes against ${plain.raw.length}`);
    });

    test('Idempotency-Key: a replay answers the recorded minimal body with Preference-Applied; the key with another preference is a 409', async () => {
      const { c, roster } = await enrolmentSetup();
      const key = randomUUID();
      const first = await bulk(c, 'enrolments', { operations: roster }, { prefer: 'return=minimal', key });
      assert.equal(first.status, 200);
      assert.equal(first.headers['idempotency-replayed'], undefined);
      // Spelt otherwise, the same preference: the same request.
      const replay = await bulk(c, 'enrolments', { operations: roster }, { prefer: 'wait=5, RETURN = "minimal"', key });
      assert.deepEqual([replay.status, replay.headers['idempotency-replayed'], applied(replay)], [200, 'true', 'return=minimal']);
      assert.equal(replay.raw, first.raw);
      assert.ok((replay.body as BulkBody).results.every((r) => Object.keys(r.data!).join() === 'id'));
      for (const prefer of [undefined, 'return=representation']) {
        const other = await bulk(c, 'enrolments', { operations: roster }, { key, ...(prefer ? { prefer } : {}) });
        assert.deepEqual([other.status, other.body.code, applied(other)], [409, 'idempotency.key_reused', undefined], `Prefer: ${prefer}`);
      }
      // And the other way round: a key first used without the preference refuses a minimal retry.
      const fullKey = randomUUID();
      const full = await bulk(c, 'enrolments', { operations: roster }, { key: fullKey });
      assert.equal(full.status, 200);
      const minimalRetry = await bulk(c, 'enrolments', { operations: roster }, { key: fullKey, prefer: 'return=minimal' });
      assert.deepEqual([minimalRetry.status, minimalRetry.body.code], [409, 'idempotency.key_reused']);
      const fullReplay = await bulk(c, 'enrolments', { operations: roster }, { key: fullKey, prefer: 'return=representation' });
      assert.deepEqual([fullReplay.status, fullReplay.headers['idempotency-replayed'], applied(fullReplay), fullReplay.raw], [200, 'true', undefined, full.raw]);
    });

    test('a Prefer header it cannot read or does not know is ignored: the full answer, no Preference-Applied, never an error', async () => {
      const { c, roster } = await enrolmentSetup();
      assert.equal((await bulk(c, 'enrolments', { operations: roster })).status, 200);
      const full = await bulk(c, 'enrolments', { operations: roster });
      const ignored = ['return=minimalist', 'return', 'return=', 'minimal', 'return=representation, return=minimal', 'respond-async', '=;,,', 'return=mini mal', 'return="minimal', 'handling=strict; return=minimal'];
      for (const prefer of ignored) {
        const res = await bulk(c, 'enrolments', { operations: roster }, { prefer });
        assert.deepEqual([res.status, applied(res), res.raw], [200, undefined, full.raw], `Prefer: ${prefer}`);
      }
      const honoured = ['RETURN=MINIMAL', 'respond-async, wait=10, return=minimal; foo="a,b"', 'return=minimal, return=representation', 'foo="x, return=representation", return=minimal'];
      for (const prefer of honoured) {
        const res = await bulk(c, 'enrolments', { operations: roster }, { prefer });
        assert.deepEqual([res.status, applied(res), res.raw], [200, 'return=minimal', JSON.stringify(cutToIds(full.body))], `Prefer: ${prefer}`);
      }
    });
  });

  test('an operation that declares no minimal answer ignores the preference: the full body, no Preference-Applied, and its key takes the request either way', async () => {
    const c = await t.make.caller();
    const key = randomUUID();
    const create = (prefer?: string) =>
      t.api.request({ host: c.org.address, key: c.key, method: 'POST', path: '/courses', body: { fullname: 'Biology', shortname: `BIO-${key.slice(0, 8)}` }, headers: { 'idempotency-key': key, ...(prefer ? { prefer } : {}) } });
    const res = await create('return=minimal');
    assert.deepEqual([res.status, applied(res), res.body.fullname], [201, undefined, 'Biology']);
    // Not part of its fingerprint: the same key without the header is the same request, replayed.
    const replay = await create();
    assert.deepEqual([replay.status, replay.headers['idempotency-replayed'], replay.raw], [201, 'true', res.raw]);
  });

  test('POST /lesson_pages/bulk: create, update, upsert, delete and a failure, each success with its id only', async () => {
    const c = await t.make.caller();
    const lesson = await t.make.lesson(c.org);
    const [p1, p2] = [await t.make.lessonPage(c.org, { lesson_id: lesson.id }), await t.make.lessonPage(c.org, { lesson_id: lesson.id })];
    const res = await bulk(c, 'lesson_pages', {
      operations: [
        { ref: 'c1', op: 'create', external_id: 'c1-ext', data: { lesson_id: lesson.id, title: 'New' } },
        { ref: 'u1', op: 'update', id: p1.id, data: { title: 'P1 renamed' } },
        { ref: 's1', op: 'upsert', external_id: 's-new', data: { lesson_id: lesson.id, title: 'Upserted' } },
        { ref: 's2', op: 'upsert', external_id: p2.external_id, data: { lesson_id: lesson.id, title: 'P2 upserted' } },
        { ref: 'd1', op: 'delete', id: p1.id },
        { ref: 'x', op: 'update', id: UNKNOWN, data: { title: 'x' } },
      ],
    }, { prefer: 'return=minimal' });
    assert.equal(res.status, 200);
    assert.equal(applied(res), 'return=minimal');
    const pageId = async (externalId: string) => (await t.database.db.selectFrom('lesson_pages').select('id').where('lesson_id', '=', lesson.id).where('external_id', '=', externalId).executeTakeFirstOrThrow()).id;
    assert.deepEqual(res.body.results.slice(0, 5), [
      { ref: 'c1', status: 201, data: { id: await pageId('c1-ext') } },
      { ref: 'u1', status: 200, data: { id: p1.id } },
      { ref: 's1', status: 201, data: { id: await pageId('s-new') } },
      { ref: 's2', status: 200, data: { id: p2.id } },
      { ref: 'd1', status: 204 },
    ]);
    assert.deepEqual([res.body.results[5].status, res.body.results[5].error.code, 'data' in res.body.results[5]], [404, 'lesson_page.not_found', false]);
    assert.deepEqual(res.body.summary, { total: 6, succeeded: 5, failed: 1 });
    const titles = await t.database.db.selectFrom('lesson_pages').select('title').where('lesson_id', '=', lesson.id).where('deleted_at', 'is', null).orderBy('sort_key').execute();
    assert.deepEqual(titles.map((p) => p.title), ['P2 upserted', 'New', 'Upserted']);
  });

  test('POST /users/bulk: a roster of people created, then resent unchanged, answers ids only and the same outcomes as the full answer', async () => {
    const c = await t.make.caller();
    const people = [0, 1, 2].map((i) => ({ ref: `p${i}`, op: 'upsert', external_id: `person-${i}`, data: { email: `p${i}-${randomUUID().slice(0, 8)}@example.test`, name: `Person ${i}` } }));
    const invalid = { ref: 'bad', op: 'upsert', external_id: 'person-bad', data: { email: 'not an address', name: 'Bad' } };
    const first = await bulk(c, 'users', { operations: [...people, invalid] }, { prefer: 'return=minimal' });
    assert.equal(applied(first), 'return=minimal');
    const userId = async (externalId: string) => (await t.database.db.selectFrom('people').select('id').where('organisation_id', '=', c.org.id).where('external_id', '=', externalId).executeTakeFirstOrThrow()).id;
    assert.deepEqual(first.body.results.slice(0, 3), [
      { ref: 'p0', status: 201, data: { id: await userId('person-0') } },
      { ref: 'p1', status: 201, data: { id: await userId('person-1') } },
      { ref: 'p2', status: 201, data: { id: await userId('person-2') } },
    ]);
    assert.deepEqual([first.body.results[3].status, first.body.results[3].error.code], [422, 'validation.invalid_body']);
    const full = await bulk(c, 'users', { operations: [...people, invalid] });
    assert.deepEqual(full.body.results.slice(0, 3).map((r: Result) => [r.status, r.unchanged, typeof r.data?.email]), [[200, true, 'string'], [200, true, 'string'], [200, true, 'string']]);
    const minimal = await bulk(c, 'users', { operations: [...people, invalid] }, { prefer: 'return=minimal' });
    assert.equal(minimal.raw, JSON.stringify(cutToIds(full.body)));
  });
});
