// Enrolments through the API on the test's database (SQLite, or PostgreSQL with TEST_DATABASE_URL): every
// operation's statuses, isolation, what ends enrolments, events delivered to real HTTPS subscribers, and the
// bulk endpoint's roster-sync guarantees (unchanged upserts write nothing, atomic rollback, exactly-once).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { sql } from 'kysely';
import { dialectUnderTest, startTestApp, manualClock, type TestContext } from '../../../test/support/harness.ts';
import type { Caller } from '../../../test/support/factories.ts';

const UNKNOWN = '01a1ffb1-ef6f-770b-ba7c-b487911c9252';

interface Result {
  ref: string;
  status: number;
  unchanged?: true;
  data?: { id: string; updated_at: string; role: string; status: string };
  error?: { code: string; category: string; detail: string };
}

describe('enrolments', () => {
  const clock = manualClock(new Date('2026-11-01T09:00:00.000Z'));
  let t: TestContext;
  before(async () => {
    t = await startTestApp({ clock });
  });
  after(() => t.close());

  type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  const call = (c: Caller, method: Method, path: string, body?: unknown, headers?: Record<string, string>) =>
    t.api.request({ host: c.org.address, key: c.key, method, path, body, headers });
  const bulk = (c: Caller, body: unknown, key: string = randomUUID()) => call(c, 'POST', '/enrolments/bulk', body, { 'idempotency-key': key });
  const rowsOf = (c: Caller) => t.database.db.selectFrom('enrolments').selectAll().where('organisation_id', '=', c.org.id).orderBy('id').execute();
  const eventsOf = (c: Caller) =>
    t.database.db.selectFrom('outbox_events').select(['type', 'data']).where('organisation_id', '=', c.org.id).where('type', 'like', 'enrolment.%').orderBy('id').execute();

  /** A fresh organisation with a course, a manual method (role student), a teacher method and two people. */
  async function setup() {
    const c = await t.make.caller();
    const course = await t.make.course(c.org);
    const method = await t.make.enrolmentMethod(c.org, { course_id: course.id });
    const teachers = await t.app.services.enrolmentMethods.create(t.database.db, c.org.id, { course_id: course.id, type: 'manual', role: 'teacher' });
    const [ada, bob] = [await t.make.person(c.org, { roles: [] }), await t.make.person(c.org, { roles: [] })];
    const body = (extra: Record<string, unknown> = {}) => ({ course_id: course.id, user_id: ada.id, enrolment_method_id: method.id, ...extra });
    return { c, course, method, teachers, ada, bob, body };
  }

  describe('create, read, list', () => {
    test('201: role defaults to the method’s; read by id and by external id; an event names enrolment, course and user', async () => {
      const { c, course, method, teachers, ada, bob, body } = await setup();
      const res = await call(c, 'POST', '/enrolments', body({ external_id: 'sis-1', ends_at: '2027-06-30T23:59:59+02:00' }));
      assert.equal(res.status, 201);
      assert.deepEqual(
        { ...res.body, id: undefined },
        {
          id: undefined,
          external_id: 'sis-1',
          course_id: course.id,
          user_id: ada.id,
          enrolment_method_id: method.id,
          role: 'student',
          status: 'active',
          starts_at: null,
          ends_at: '2027-06-30T21:59:59.000Z',
          created_at: clock.now().toISOString(),
          updated_at: clock.now().toISOString(),
          deleted_at: null,
        },
      );
      const teacher = await call(c, 'POST', '/enrolments', body({ user_id: bob.id, enrolment_method_id: teachers.id }));
      assert.equal(teacher.body.role, 'teacher');
      const chosen = await call(c, 'POST', '/enrolments', body({ user_id: bob.id, role: 'non_editing_teacher', status: 'suspended' }));
      assert.deepEqual([chosen.body.role, chosen.body.status], ['non_editing_teacher', 'suspended']);
      assert.deepEqual((await call(c, 'GET', `/enrolments/${res.body.id}`)).body, res.body);
      assert.deepEqual((await call(c, 'GET', '/enrolments/ext:sis-1')).body, res.body);
      const [event] = await eventsOf(c);
      assert.equal(event.type, 'enrolment.created');
      assert.deepEqual({ ...JSON.parse(event.data), summary: undefined }, { id: res.body.id, course_id: course.id, user_id: ada.id, summary: undefined });
    });

    test('lists filter by course_id, user_id and status, page with cursors, and follow changes with updated_since', async () => {
      const { c, course, ada, bob, body } = await setup();
      const other = await t.make.course(c.org);
      const otherMethod = await t.make.enrolmentMethod(c.org, { course_id: other.id });
      const a = (await call(c, 'POST', '/enrolments', body())).body;
      const b = (await call(c, 'POST', '/enrolments', body({ user_id: bob.id, status: 'suspended' }))).body;
      const d = (await call(c, 'POST', '/enrolments', body({ course_id: other.id, enrolment_method_id: otherMethod.id }))).body;
      const ids = async (query: string) => (await call(c, 'GET', `/enrolments?${query}`)).body.data.map((e: { id: string }) => e.id);
      assert.deepEqual(await ids(''), [a.id, b.id, d.id]);
      assert.deepEqual(await ids(`course_id=${course.id}`), [a.id, b.id]);
      assert.deepEqual(await ids(`user_id=${ada.id}`), [a.id, d.id]);
      assert.deepEqual(await ids('status=suspended'), [b.id]);
      const first = await call(c, 'GET', '/enrolments?limit=2');
      assert.equal(first.body.page.has_more, true);
      const second = await call(c, 'GET', `/enrolments?limit=2&cursor=${encodeURIComponent(first.body.page.next_cursor)}`);
      assert.deepEqual(second.body.data.map((e: { id: string }) => e.id), [d.id]);
      clock.advance(60_000);
      const since = clock.now().toISOString();
      clock.advance(1000);
      await call(c, 'PATCH', `/enrolments/${a.id}`, { status: 'suspended' });
      assert.deepEqual(await ids(`updated_since=${encodeURIComponent(since)}`), [a.id]);
      for (const q of ['status=ended', 'user_id=nope', 'limit=201', 'cursor=garbage', 'colour=red']) {
        const res = await call(c, 'GET', `/enrolments?${q}`);
        assert.equal(res.status, 422, q);
        assert.equal(res.body.code, 'validation.invalid_parameter');
      }
    });

    test('refusals name the field or the conflict, and change nothing', async () => {
      const { c, course, method, ada, bob, body } = await setup();
      const elsewhere = await t.make.enrolmentMethod(c.org);
      const disabled = await t.app.services.enrolmentMethods.create(t.database.db, c.org.id, { course_id: course.id, type: 'manual', status: 'disabled' });
      const deletedMethod = await t.make.enrolmentMethod(c.org, { course_id: course.id });
      await call(c, 'DELETE', `/enrolment_methods/${deletedMethod.id}`);
      await call(c, 'POST', '/enrolments', body({ external_id: 'taken' }));
      const gone = await t.make.person(c.org, { roles: [] });
      await t.app.services.people.remove(c.org.id, gone.id);
      const rowsBefore = await rowsOf(c);
      const eventsBefore = await eventsOf(c);
      const cases: Array<[Record<string, unknown>, number, string, string?]> = [
        [body({ user_id: bob.id, enrolment_method_id: elsewhere.id }), 422, 'validation.invalid_body', '/enrolment_method_id'],
        [body({ user_id: bob.id, enrolment_method_id: UNKNOWN }), 422, 'validation.invalid_body', '/enrolment_method_id'],
        [body({ course_id: UNKNOWN }), 422, 'validation.invalid_body', '/course_id'],
        [body({ user_id: UNKNOWN }), 422, 'validation.invalid_body', '/user_id'],
        [body({ user_id: bob.id, starts_at: '2027-01-02T00:00:00Z', ends_at: '2027-01-01T00:00:00Z' }), 422, 'validation.invalid_body', '/ends_at'],
        [body({ user_id: bob.id, role: 'dean' }), 422, 'validation.invalid_body', '/role'],
        [body({ user_id: bob.id, colour: 'red' }), 422, 'validation.invalid_body', '/colour'],
        [{ course_id: course.id, user_id: bob.id }, 422, 'validation.invalid_body', '/enrolment_method_id'],
        [body({ user_id: bob.id, enrolment_method_id: disabled.id }), 409, 'enrolment_method.disabled'],
        [body({ user_id: bob.id, enrolment_method_id: deletedMethod.id }), 409, 'enrolment_method.disabled'],
        [body(), 409, 'enrolment.exists'],
        [body({ user_id: gone.id }), 409, 'user.deleted'],
        [body({ user_id: bob.id, external_id: 'taken' }), 409, 'resource.external_id_taken'],
      ];
      for (const [input, status, code, pointer] of cases) {
        const res = await call(c, 'POST', '/enrolments', input);
        assert.equal(res.status, status, JSON.stringify(input));
        assert.equal(res.body.code, code, JSON.stringify(input));
        if (pointer) assert.ok(res.body.errors.some((e: { path: string }) => e.path === pointer), `${pointer}: ${res.raw}`);
      }
      await call(c, 'DELETE', `/courses/${course.id}`);
      const deletedCourse = await call(c, 'POST', '/enrolments', body({ user_id: bob.id }));
      assert.deepEqual([deletedCourse.status, deletedCourse.body.code], [409, 'course.deleted']);
      assert.equal(method.course_id, course.id);
      // The course's deletion ended ada's enrolment; nothing else changed.
      assert.equal((await rowsOf(c)).length, rowsBefore.length);
      assert.deepEqual((await eventsOf(c)).slice(0, eventsBefore.length), eventsBefore);
      assert.deepEqual((await eventsOf(c)).slice(eventsBefore.length).map((e) => e.type), ['enrolment.deleted']);
      void ada;
    });
  });

  describe('PATCH and DELETE', () => {
    test('PATCH changes role, status and dates; a PATCH that changes nothing keeps updated_at and writes no event', async () => {
      const { c, body } = await setup();
      const e = (await call(c, 'POST', '/enrolments', body())).body;
      clock.advance(60_000);
      const res = await call(c, 'PATCH', `/enrolments/${e.id}`, { role: 'teacher', status: 'suspended', starts_at: '2027-01-01T00:00:00Z' });
      assert.equal(res.status, 200);
      assert.deepEqual([res.body.role, res.body.status, res.body.starts_at, res.body.updated_at], ['teacher', 'suspended', '2027-01-01T00:00:00.000Z', clock.now().toISOString()]);
      clock.advance(60_000);
      const same = await call(c, 'PATCH', `/enrolments/${e.id}`, { role: 'teacher', starts_at: '2027-01-01T01:00:00+01:00' });
      assert.equal(same.status, 200);
      assert.equal(same.body.updated_at, res.body.updated_at);
      assert.deepEqual((await eventsOf(c)).map((x) => x.type), ['enrolment.created', 'enrolment.updated']);
      const bad = await call(c, 'PATCH', `/enrolments/${e.id}`, { ends_at: '2026-12-31T00:00:00Z' });
      assert.deepEqual([bad.status, bad.body.errors[0].path], [422, '/ends_at']);
      const immutable = await call(c, 'PATCH', `/enrolments/${e.id}`, { course_id: UNKNOWN });
      assert.deepEqual([immutable.status, immutable.body.errors[0].path], [422, '/course_id']);
      assert.equal((await call(c, 'GET', `/enrolments/${e.id}`)).body.ends_at, null);
      assert.equal((await call(c, 'PATCH', `/enrolments/${UNKNOWN}`, { status: 'active' })).status, 404);
    });

    test('DELETE is soft: 204, leaves lists unless include_deleted, tombstone, 409 again, 404 unknown; deleted ones cannot change', async () => {
      const { c, body } = await setup();
      const e = (await call(c, 'POST', '/enrolments', body({ external_id: 'gone-1' }))).body;
      clock.advance(1000);
      assert.equal((await call(c, 'DELETE', `/enrolments/${e.id}`)).status, 204);
      assert.deepEqual((await call(c, 'GET', '/enrolments')).body.data, []);
      assert.equal((await call(c, 'GET', '/enrolments?include_deleted=true')).body.data[0].deleted_at, clock.now().toISOString());
      assert.deepEqual((await call(c, 'GET', '/enrolments/deletions')).body.data, [{ id: e.id, external_id: 'gone-1', deleted_at: clock.now().toISOString() }]);
      const again = await call(c, 'DELETE', `/enrolments/${e.id}`);
      assert.deepEqual([again.status, again.body.code], [409, 'enrolment.deleted']);
      assert.equal((await call(c, 'PATCH', `/enrolments/${e.id}`, { status: 'active' })).body.code, 'enrolment.deleted');
      assert.equal((await call(c, 'PUT', '/enrolments/ext:gone-1', body())).body.code, 'enrolment.deleted');
      assert.equal((await call(c, 'DELETE', `/enrolments/${UNKNOWN}`)).status, 404);
      // Ended, the same person can be enrolled through the same method again.
      assert.equal((await call(c, 'POST', '/enrolments', body())).status, 201);
      assert.deepEqual((await eventsOf(c)).map((x) => x.type), ['enrolment.created', 'enrolment.deleted', 'enrolment.created']);
    });
  });

  describe('PUT /enrolments/ext:{external_id}', () => {
    test('201 creates; 200 updates; an unchanged upsert writes nothing; course, user and method cannot change (422)', async () => {
      const { c, body, bob } = await setup();
      const created = await call(c, 'PUT', '/enrolments/ext:sis-9', body());
      assert.equal(created.status, 201);
      clock.advance(1000);
      const same = await call(c, 'PUT', '/enrolments/ext:sis-9', body());
      assert.equal(same.status, 200);
      assert.equal(same.body.updated_at, created.body.updated_at);
      const changed = await call(c, 'PUT', '/enrolments/ext:sis-9', body({ role: 'teacher' }));
      assert.deepEqual([changed.status, changed.body.role], [200, 'teacher']);
      assert.notEqual(changed.body.updated_at, created.body.updated_at);
      const moved = await call(c, 'PUT', '/enrolments/ext:sis-9', body({ user_id: bob.id }));
      assert.deepEqual([moved.status, moved.body.errors[0].path], [422, '/user_id']);
      assert.deepEqual((await eventsOf(c)).map((x) => x.type), ['enrolment.created', 'enrolment.updated']);
      assert.equal((await call(c, 'GET', '/enrolments/ext:nope')).status, 404);
    });
  });

  test('isolation: another organisation’s enrolment is not found, and its course, user and method cannot be named', async () => {
    const mine = await setup();
    const theirs = await setup();
    const e = (await call(theirs.c, 'POST', '/enrolments', theirs.body({ external_id: 'theirs' }))).body;
    for (const [method, path, body] of [
      ['GET', `/enrolments/${e.id}`],
      ['GET', '/enrolments/ext:theirs'],
      ['PATCH', `/enrolments/${e.id}`, { status: 'suspended' }],
      ['DELETE', `/enrolments/${e.id}`],
    ] as Array<[Method, string, unknown?]>) {
      const res = await call(mine.c, method, path, body);
      assert.deepEqual([res.status, res.body.code], [404, 'enrolment.not_found'], `${method} ${path}`);
    }
    const bulkRes = await bulk(mine.c, { operations: [{ ref: 'x', op: 'delete', id: e.id }] });
    assert.equal(bulkRes.body.results[0].status, 404);
    const named = await call(mine.c, 'POST', '/enrolments', theirs.body());
    assert.deepEqual([named.status, named.body.errors[0].path], [422, '/course_id']);
    const theirUser = await call(mine.c, 'POST', '/enrolments', mine.body({ user_id: theirs.ada.id }));
    assert.deepEqual([theirUser.status, theirUser.body.errors[0].path], [422, '/user_id']);
    assert.deepEqual((await call(mine.c, 'GET', `/enrolments?user_id=${theirs.ada.id}`)).body.data, []);
    assert.equal((await call(theirs.c, 'GET', `/enrolments/${e.id}`)).body.status, 'active');
  });

  test('capabilities: a teacher may enrol; a key without enrolments:write may not', async () => {
    const { c, body } = await setup();
    const teacher = await t.make.caller({ org: c.org, roles: ['teacher'] });
    assert.equal((await call(teacher, 'POST', '/enrolments', body())).status, 201);
    const reader = await t.make.caller({ org: c.org, scopes: ['enrolments:read'] });
    const refused = await call(reader, 'POST', '/enrolments', body());
    assert.deepEqual([refused.status, refused.body.code], [403, 'auth.insufficient_scope']);
  });

  describe('what ends enrolments', () => {
    test('removing a person ends their enrolments in every course, each with its event and tombstone', async () => {
      const { c, body, course } = await setup();
      const other = await t.make.course(c.org);
      const otherMethod = await t.make.enrolmentMethod(c.org, { course_id: other.id });
      const a = (await call(c, 'POST', '/enrolments', body())).body;
      const b = (await call(c, 'POST', '/enrolments', body({ course_id: other.id, enrolment_method_id: otherMethod.id }))).body;
      assert.equal(await t.app.services.people.remove(c.org.id, a.user_id), true);
      const deleted = (await eventsOf(c)).filter((e) => e.type === 'enrolment.deleted').map((e) => JSON.parse(e.data));
      assert.deepEqual(deleted.map((d) => d.id).sort(), [a.id, b.id].sort());
      assert.ok(deleted.every((d) => d.user_id === a.user_id));
      assert.deepEqual((await call(c, 'GET', '/enrolments/deletions')).body.data.map((d: { id: string }) => d.id).sort(), [a.id, b.id].sort());
      void course;
    });

    test('deleting an enrolment method with unenrol=true ends its enrolments with an event each', async () => {
      const { c, body, method } = await setup();
      const a = (await call(c, 'POST', '/enrolments', body())).body;
      assert.equal((await call(c, 'DELETE', `/enrolment_methods/${method.id}`)).body.code, 'enrolment_method.has_enrolments');
      assert.equal((await call(c, 'DELETE', `/enrolment_methods/${method.id}?unenrol=true`)).status, 204);
      assert.notEqual((await call(c, 'GET', `/enrolments/${a.id}`)).body.deleted_at, null);
      assert.deepEqual((await eventsOf(c)).map((e) => e.type), ['enrolment.created', 'enrolment.deleted']);
    });

    test('a failure while ending a course’s enrolments rolls the course’s deletion back too', async () => {
      const { c, body, course } = await setup();
      await call(c, 'POST', '/enrolments', body());
      // The outbox refuses this organisation's enrolment.deleted events: in the database, since on PostgreSQL the
      // course's delete makes its enrolments' events in SQL, in its one statement (courses.repository.ts).
      const trigger = `outbox_full_${randomUUID().replaceAll('-', '')}`;
      const when = `new.organisation_id = '${c.org.id}' and new.type = 'enrolment.deleted'`;
      const postgres = dialectUnderTest === 'postgres';
      if (postgres) {
        await sql.raw(`create or replace function atrium_test_outbox_full() returns trigger language plpgsql as $$ begin raise exception 'outbox full'; end $$`).execute(t.database.db);
        await sql.raw(`create trigger ${trigger} before insert on outbox_events for each row when (${when}) execute function atrium_test_outbox_full()`).execute(t.database.db);
      } else {
        await sql.raw(`create trigger ${trigger} before insert on outbox_events when ${when} begin select raise(abort, 'outbox full'); end`).execute(t.database.db);
      }
      try {
        assert.equal((await call(c, 'DELETE', `/courses/${course.id}`)).status, 500);
      } finally {
        await sql.raw(`drop trigger ${trigger}${postgres ? ' on outbox_events' : ''}`).execute(t.database.db);
      }
      assert.equal((await call(c, 'GET', `/courses/${course.id}`)).body.deleted_at, null);
      assert.equal((await rowsOf(c))[0].deleted_at, null);
    });
  });

  test('events reach subscriptions by name, by enrolment.* and by *, over HTTPS, signed', async () => {
    const { c, body } = await setup();
    const subscribe = async (name: string, types: string[]) => {
      const path = `/hooks/enrol-${name}-${randomUUID()}`;
      const sub = await t.make.webhookSubscription(c.org, { event_types: types, url: `${t.receiver.url}${path}` });
      return { path, secret: sub.secret };
    };
    const byName = await subscribe('name', ['enrolment.created']);
    const byArea = await subscribe('area', ['enrolment.*']);
    const all = await subscribe('all', ['*']);
    const e = (await call(c, 'POST', '/enrolments', body())).body;
    await call(c, 'DELETE', `/enrolments/${e.id}`);
    while ((await t.app.services.webhookDelivery.dispatch()) > 0);
    while ((await t.app.services.webhookDelivery.deliver()) > 0);
    const typesAt = async (sub: { path: string; secret: string }, n: number) =>
      (await t.receiver.waitFor(n, sub.path)).map((r) => new Webhook(sub.secret).verify(r.body, r.headers) as { type: string; data: Record<string, string> });
    assert.deepEqual((await typesAt(byName, 1)).map((p) => p.type), ['enrolment.created']);
    const area = await typesAt(byArea, 2);
    assert.deepEqual(area.map((p) => p.type).sort(), ['enrolment.created', 'enrolment.deleted']);
    assert.deepEqual({ ...area[0].data, summary: undefined }, { id: e.id, course_id: e.course_id, user_id: e.user_id, summary: undefined });
    // `*` also carries what the setup wrote before (the course, its methods, the subscriptions).
    assert.deepEqual((await typesAt(all, 2)).map((p) => p.type).filter((type) => type.startsWith('enrolment.')).sort(), ['enrolment.created', 'enrolment.deleted']);
  });

  describe('POST /enrolments/bulk', () => {
    test('every op; a resend of the same upserts reports unchanged, keeps updated_at and writes no event', async () => {
      const { c, body, bob, method } = await setup();
      const existing = (await call(c, 'POST', '/enrolments', body({ user_id: bob.id, external_id: 'bob' }))).body;
      const people = [await t.make.person(c.org, { roles: [] }), await t.make.person(c.org, { roles: [] }), await t.make.person(c.org, { roles: [] })];
      const roster = people.map((p, i) => ({ ref: `r${i}`, op: 'upsert', external_id: `sis-${i}`, data: body({ user_id: p.id }) }));
      const first = await bulk(c, {
        operations: [
          ...roster,
          { ref: 'new', op: 'create', external_id: 'ada', data: body() },
          { ref: 'patch', op: 'update', external_id: 'bob', data: { role: 'teacher' } },
          { ref: 'dup', op: 'create', data: body({ user_id: people[0].id }) },
        ],
      });
      assert.equal(first.status, 200);
      assert.deepEqual(first.body.results.map((r: Result) => [r.ref, r.status, r.error?.code]), [
        ['r0', 201, undefined],
        ['r1', 201, undefined],
        ['r2', 201, undefined],
        ['new', 201, undefined],
        ['patch', 200, undefined],
        ['dup', 409, 'enrolment.exists'],
      ]);
      const eventsAfterFirst = (await eventsOf(c)).length;
      clock.advance(60_000);
      const rowsBefore = await rowsOf(c);
      const again = await bulk(c, { operations: [...roster, { ref: 'end', op: 'delete', id: existing.id }] });
      const results = again.body.results as Result[];
      assert.deepEqual(results.slice(0, 3).map((r) => [r.status, r.unchanged]), [[200, true], [200, true], [200, true]]);
      assert.deepEqual(results.slice(0, 3).map((r) => r.data!.updated_at), first.body.results.slice(0, 3).map((r: Result) => r.data!.updated_at));
      assert.deepEqual([results[3].status, results[3].unchanged], [204, undefined]);
      assert.deepEqual((await eventsOf(c)).slice(eventsAfterFirst).map((e) => e.type), ['enrolment.deleted']);
      const rowsAfter = await rowsOf(c);
      assert.deepEqual(rowsAfter.filter((r) => r.id !== existing.id), rowsBefore.filter((r) => r.id !== existing.id), 'no other row changed');
      // A changed roster line is an update (200 without `unchanged`), the rest stay unchanged.
      const changed = await bulk(c, { operations: [{ ...roster[0], data: { ...roster[0].data, status: 'suspended' } }, roster[1]] });
      assert.deepEqual(changed.body.results.map((r: Result) => [r.status, r.unchanged ?? false, r.data?.status]), [[200, false, 'suspended'], [200, true, 'active']]);
      void method;
    });

    test('one upsert per op in a request: a second op on the same external id sees the first one’s effect', async () => {
      const { c, body } = await setup();
      const res = await bulk(c, {
        operations: [
          { ref: 'a', op: 'upsert', external_id: 'x', data: body() },
          { ref: 'b', op: 'upsert', external_id: 'x', data: body() },
          { ref: 'c', op: 'update', external_id: 'x', data: { role: 'teacher' } },
          { ref: 'd', op: 'delete', external_id: 'x' },
          { ref: 'e', op: 'create', data: body() },
        ],
      });
      assert.deepEqual(res.body.results.map((r: Result) => [r.status, r.unchanged ?? false]), [[201, false], [200, true], [200, false], [204, false], [201, false]]);
    });

    test('atomic: the first failure undoes everything, no event; the others report bulk.rolled_back', async () => {
      const { c, body, bob } = await setup();
      const res = await bulk(c, {
        atomic: true,
        operations: [
          { ref: 'ok', op: 'upsert', external_id: 'a1', data: body() },
          { ref: 'bad', op: 'create', data: body({ user_id: bob.id, enrolment_method_id: UNKNOWN }) },
          { ref: 'later', op: 'create', data: body({ user_id: bob.id }) },
        ],
      });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.summary, { total: 3, succeeded: 0, failed: 3 });
      assert.deepEqual(res.body.results.map((r: Result) => [r.status, r.error!.code]), [[409, 'bulk.rolled_back'], [422, 'validation.invalid_body'], [409, 'bulk.rolled_back']]);
      assert.match(res.body.results[1].error.detail, /^\/operations\/1\/data\/enrolment_method_id: /);
      assert.deepEqual(await rowsOf(c), []);
      assert.deepEqual(await eventsOf(c), []);
    });

    test('a retried request with its Idempotency-Key takes effect once and replays the first answer', async () => {
      const { c, body, bob } = await setup();
      const key = randomUUID();
      const request = { operations: [{ ref: 'a', op: 'upsert', external_id: 'a', data: body() }, { ref: 'b', op: 'create', data: body({ user_id: bob.id }) }] };
      const [one, two] = await Promise.all([bulk(c, request, key), bulk(c, request, key)]);
      const third = await bulk(c, request, key);
      const ran = [one, two, third].filter((r) => r.status === 200 && r.headers['idempotency-replayed'] === undefined);
      assert.equal(ran.length, 1);
      assert.equal(third.headers['idempotency-replayed'], 'true');
      assert.equal(third.raw, ran[0].raw);
      assert.equal((await rowsOf(c)).length, 2);
      assert.equal((await eventsOf(c)).length, 2);
      const reused = await bulk(c, { operations: [request.operations[0]] }, key);
      assert.deepEqual([reused.status, reused.body.code], [409, 'idempotency.key_reused']);
    });

    test('limits and a malformed envelope: 413 over 500 (100 atomic), 422 for a duplicate ref; nothing runs', async () => {
      const { c, body } = await setup();
      const ops = (n: number) => Array.from({ length: n }, (_, i) => ({ ref: `r${i}`, op: 'upsert', external_id: `e${i}`, data: body() }));
      const tooMany = await bulk(c, { operations: ops(501) });
      assert.deepEqual([tooMany.status, tooMany.body.code], [413, 'bulk.too_many_operations']);
      const tooManyAtomic = await bulk(c, { operations: ops(101), atomic: true });
      assert.deepEqual([tooManyAtomic.status, tooManyAtomic.body.code], [413, 'bulk.too_many_operations']);
      const dup = await bulk(c, { operations: [...ops(1), ...ops(1)] });
      assert.deepEqual([dup.status, dup.body.errors[0].path], [422, '/operations/1/ref']);
      assert.deepEqual(await rowsOf(c), []);
    });
  });
});
