// The PATCH and DELETE of an enrolment method, an enrolment and a webhook subscription without an Idempotency-Key
// are, on PostgreSQL, one statement sent with the audit entry and COMMIT (src/db/final-statement.ts): the change,
// its event (and a delete's tombstone) made by the database, their refusals (404, 409, 422) stated as premises
// that send the request down its full path. On SQLite the same request takes that path at once. This file runs on
// both and holds them to the same answers, events byte for byte, tombstones and audit entries.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestAppWithCaller, type TestContext } from './support/harness.ts';
import type { Caller } from './support/factories.ts';
import { writeTraces } from './support/write-traces.ts';

describe('PATCH and DELETE of enrolment methods, enrolments and webhook subscriptions: in one statement or on the full path, alike', () => {
  let t: TestContext;
  let caller: Caller;
  after(() => t?.close());
  before(async () => ({ t, caller } = await startTestAppWithCaller()));

  const request = (method: 'GET' | 'PATCH' | 'DELETE', path: string, body?: unknown) => t.api.request({ host: caller.org.address, key: caller.key, method, path, ...(body === undefined ? {} : { body }) });
  const { eventsOf, tombstonesOf: tombstones, ...traces } = writeTraces(() => ({ t, caller }));
  const successEntries = async (id: string) => (await traces.successEntries(id, ['action', 'status'])).map((e) => [e.action, e.status]);
  /** A PATCH that changes nothing: 200 with the resource as it was (same updated_at), no event but its creation's, one success entry. */
  async function changesNothing(path: string, body: unknown, made: { id: string; updated_at: string }, createdEvent: string, action: string) {
    const res = await request('PATCH', path, body);
    assert.equal(res.status, 200, res.raw);
    assert.equal(res.body.updated_at, made.updated_at);
    assert.deepEqual((await eventsOf(made.id)).map((e) => e.type), [createdEvent]);
    assert.deepEqual(await successEntries(made.id), [[action, 200]]);
  }
  /** A create refused: its status, its code and (for a 422) the pointer of its one error. */
  async function createRefused(collection: string, body: Record<string, unknown>, status: number, code: string, pointer?: string) {
    const res = await t.api.request({ host: caller.org.address, key: caller.key, method: 'POST', path: `/${collection}`, body });
    assert.equal(res.status, status, `${JSON.stringify(body)}: ${res.raw}`);
    assert.equal(res.body.code, code);
    if (pointer) assert.deepEqual(res.body.errors.map((e: { path: string }) => e.path), [pointer]);
  }
  /**
   * After a delete answered 204 (`events` as it left them): readable as deleted, its tombstone, one success entry;
   * deleted again, a 409; an absent id, a 404; neither writes anything.
   */
  async function deletedOnce(collection: string, made: { id: string; external_id: string | null }, events: unknown, codes: { deleted: string; notFound: string }) {
    const resourceType = collection.replace(/s$/, '');
    const action = `delete${resourceType.replace(/(^|_)(\w)/g, (_, __, c: string) => c.toUpperCase())}`;
    assert.ok((await request('GET', `/${collection}/${made.id}`)).body.deleted_at);
    assert.deepEqual(await tombstones(made.id), [{ resource_type: resourceType, external_id: made.external_id }]);
    assert.deepEqual(await successEntries(made.id), [[action, 204]]);
    await refused(await request('DELETE', `/${collection}/${made.id}`), 409, codes.deleted, made.id, events, [[action, 204]]);
    const absent = crypto.randomUUID();
    await refused(await request('DELETE', `/${collection}/${absent}`), 404, codes.notFound, absent, [], []);
  }
  /** A refusal: its status and code, and nothing written (the events and success entries as before). */
  async function refused(res: Awaited<ReturnType<typeof request>>, status: number, code: string, id: string, eventsBefore: unknown, entriesBefore: unknown) {
    assert.equal(res.status, status, res.raw);
    assert.equal(res.body.code, code);
    assert.deepEqual(await eventsOf(id), eventsBefore);
    assert.deepEqual(await successEntries(id), entriesBefore);
  }

  describe('enrolment methods', () => {
    const label = (name: string | null, type: string) => (name ? `${JSON.stringify(name)} (${type})` : type);

    test('a change answers the method as changed; its event lists what differed and names the method as it is now', async () => {
      for (const name of ['Plain', 'Quotes " and \\ and\nnew line', 'Ünïcödé ☃ 𝄞 and \u2028', null]) {
        const method = await t.make.enrolmentMethod(caller.org, { type: 'self', name: 'Before', settings: { enrolment_key: 'k1' } });
        const res = await request('PATCH', `/enrolment_methods/${method.id}`, { name, status: 'disabled', role: 'student', settings: { enrolment_key: 'k2', max_enrolments: 5 } });
        assert.equal(res.status, 200, res.raw);
        assert.equal(res.body.name, name);
        assert.equal(res.body.status, 'disabled');
        assert.deepEqual(res.body.settings, { enrolment_key: 'k2', max_enrolments: 5 });
        // Changed in the same millisecond it was made, perhaps: not before it.
        assert.ok(res.body.updated_at >= method.updated_at);
        const events = await eventsOf(method.id);
        assert.deepEqual(events.map((e) => e.type), ['enrolment_method.created', 'enrolment_method.updated']);
        // role was already student: not listed.
        assert.equal(events[1].data, JSON.stringify({ id: method.id, course_id: method.course_id, summary: `Enrolment method ${label(name, 'self')} changed: name, status, settings.` }));
        assert.deepEqual(await successEntries(method.id), [['updateEnrolmentMethod', 200]]);
        assert.deepEqual((await request('GET', `/enrolment_methods/${method.id}`)).body, res.body);
      }
    });

    test('a change of one field among others already so lists that field alone', async () => {
      const method = await t.make.enrolmentMethod(caller.org, { name: 'Manual' });
      const res = await request('PATCH', `/enrolment_methods/${method.id}`, { name: 'Manual', status: 'enabled', role: 'teacher' });
      assert.equal(res.status, 200);
      assert.equal(res.body.role, 'teacher');
      const events = await eventsOf(method.id);
      assert.equal(events.at(-1)!.data, JSON.stringify({ id: method.id, course_id: method.course_id, summary: 'Enrolment method "Manual" (manual) changed: role.' }));
    });

    test('a PATCH that changes nothing answers the method as it is, with no event and no new updated_at', async () => {
      const method = await t.make.enrolmentMethod(caller.org, { type: 'self', name: 'Same', settings: { enrolment_key: 'k' } });
      await changesNothing(`/enrolment_methods/${method.id}`, { name: 'Same', status: 'enabled', settings: { enrolment_key: 'k' } }, method, 'enrolment_method.created', 'updateEnrolmentMethod');
    });

    test('refusals: absent 404, deleted 409, settings that do not suit the type 422 (even when nothing else would change)', async () => {
      const absent = crypto.randomUUID();
      await refused(await request('PATCH', `/enrolment_methods/${absent}`, { name: 'Nobody' }), 404, 'enrolment_method.not_found', absent, [], []);

      const self = await t.make.enrolmentMethod(caller.org, { type: 'self' });
      const events = await eventsOf(self.id);
      const notApplicable = await request('PATCH', `/enrolment_methods/${self.id}`, { name: 'New', settings: { password: 'x' } });
      await refused(notApplicable, 422, 'validation.invalid_body', self.id, events, []);
      assert.deepEqual(notApplicable.body.errors.map((e: { path: string; code: string }) => [e.path, e.code]), [['/settings/password', 'not_applicable']]);
      const cohort = await t.make.enrolmentMethod(caller.org, { type: 'cohort', settings: { cohort_id: 'c1' } });
      const required = await request('PATCH', `/enrolment_methods/${cohort.id}`, { settings: {} });
      await refused(required, 422, 'validation.invalid_body', cohort.id, await eventsOf(cohort.id), []);
      assert.deepEqual(required.body.errors.map((e: { path: string; code: string }) => [e.path, e.code]), [['/settings/cohort_id', 'required']]);
      // The same settings as it has, of a type they do not suit, is still a 422 (checked before "nothing to change").
      assert.equal((await request('PATCH', `/enrolment_methods/${self.id}`, { settings: { cohort_id: 'c' } })).status, 422);

      assert.equal((await request('DELETE', `/enrolment_methods/${self.id}`)).status, 204);
      const deletedEvents = await eventsOf(self.id);
      await refused(await request('PATCH', `/enrolment_methods/${self.id}`, { name: 'Too late' }), 409, 'enrolment_method.deleted', self.id, deletedEvents, [['deleteEnrolmentMethod', 204]]);
    });

    test('a create, the course and the type\'s switch read in one query: the method, its event; every refusal as before', async () => {
      const post = (body: Record<string, unknown>) => t.api.request({ host: caller.org.address, key: caller.key, method: 'POST', path: '/enrolment_methods', body });
      const course = await t.make.course(caller.org);
      const externalId = `m-${crypto.randomUUID()}`;
      const created = await post({ course_id: course.id, type: 'self', name: 'Key "A"', settings: { enrolment_key: 'k' }, external_id: externalId });
      assert.equal(created.status, 201, created.raw);
      assert.deepEqual(await eventsOf(created.body.id), [{ type: 'enrolment_method.created', data: JSON.stringify({ id: created.body.id, course_id: course.id, summary: 'Enrolment method "Key \\"A\\"" (self) added.' }) }]);
      assert.deepEqual(await successEntries(created.body.id), [['createEnrolmentMethod', 201]]);

      const expectRefusal = (body: Record<string, unknown>, status: number, code: string, pointer?: string) => createRefused('enrolment_methods', body, status, code, pointer);
      await expectRefusal({ course_id: crypto.randomUUID(), type: 'manual' }, 422, 'validation.invalid_body', '/course_id');
      await expectRefusal({ course_id: course.id, type: 'guest', settings: { enrolment_key: 'k' } }, 422, 'validation.invalid_body', '/settings/enrolment_key');
      await expectRefusal({ course_id: course.id, type: 'manual', external_id: externalId }, 409, 'resource.external_id_taken');
      await t.app.services.extensions.setEnabled(t.database.db, caller.org.id, 'enrol_cohort', false);
      try {
        await expectRefusal({ course_id: course.id, type: 'cohort', settings: { cohort_id: 'c' } }, 409, 'extension.disabled');
        // Another type is not switched off with it.
        assert.equal((await post({ course_id: course.id, type: 'manual' })).status, 201);
      } finally {
        await t.app.services.extensions.setEnabled(t.database.db, caller.org.id, 'enrol_cohort', true);
      }
      assert.equal((await post({ course_id: course.id, type: 'cohort', settings: { cohort_id: 'c' } })).status, 201);
      const gone = await t.make.course(caller.org);
      assert.equal((await t.api.request({ host: caller.org.address, key: caller.key, method: 'DELETE', path: `/courses/${gone.id}` })).status, 204);
      await expectRefusal({ course_id: gone.id, type: 'manual' }, 409, 'course.deleted');
    });

    test('a delete of a method nobody is enrolled through: readable as deleted, its tombstone, its event; again 409, absent 404', async () => {
      for (const name of ['Plain', 'Tab\tand "quotes"', null]) {
        const method = await t.make.enrolmentMethod(caller.org, { type: 'guest', name });
        const res = await request('DELETE', `/enrolment_methods/${method.id}`);
        assert.equal(res.status, 204, res.raw);
        const events = await eventsOf(method.id);
        assert.deepEqual(events.map((e) => e.type), ['enrolment_method.created', 'enrolment_method.deleted']);
        assert.equal(events[1].data, JSON.stringify({ id: method.id, course_id: method.course_id, summary: `Enrolment method ${label(name, 'guest')} deleted.` }));
        await deletedOnce('enrolment_methods', method, events, { deleted: 'enrolment_method.deleted', notFound: 'enrolment_method.not_found' });
      }
    });

    test('a method with a live enrolment: 409 has_enrolments, nothing written; with unenrol=true it goes, and the enrolment ends; one whose enrolments ended goes without', async () => {
      const enrolment = await t.make.enrolment(caller.org);
      const methodId = enrolment.enrolment_method_id;
      const events = await eventsOf(methodId);
      await refused(await request('DELETE', `/enrolment_methods/${methodId}`), 409, 'enrolment_method.has_enrolments', methodId, events, []);
      assert.equal((await request('GET', `/enrolment_methods/${methodId}`)).body.deleted_at, null);
      assert.deepEqual(await tombstones(methodId), []);

      assert.equal((await request('DELETE', `/enrolment_methods/${methodId}?unenrol=true`)).status, 204);
      const after = await eventsOf(methodId);
      assert.deepEqual(after.map((e) => e.type), ['enrolment_method.created', 'enrolment_method.deleted']);
      assert.equal(after[1].data, JSON.stringify({ id: methodId, course_id: enrolment.course_id, summary: 'Enrolment method manual deleted; 1 enrolment(s) ended.' }));
      assert.ok((await request('GET', `/enrolments/${enrolment.id}`)).body.deleted_at);

      const ended = await t.make.enrolment(caller.org);
      assert.equal((await request('DELETE', `/enrolments/${ended.id}`)).status, 204);
      assert.equal((await request('DELETE', `/enrolment_methods/${ended.enrolment_method_id}`)).status, 204);
      assert.deepEqual(await tombstones(ended.enrolment_method_id), [{ resource_type: 'enrolment_method', external_id: (await request('GET', `/enrolment_methods/${ended.enrolment_method_id}`)).body.external_id }]);
    });
  });

  describe('enrolments', () => {
    test('a create, its reads made in one query: the enrolment, its event; every refusal as before', async () => {
      const post = (body: Record<string, unknown>) => t.api.request({ host: caller.org.address, key: caller.key, method: 'POST', path: '/enrolments', body });
      const course = await t.make.course(caller.org);
      const method = await t.make.enrolmentMethod(caller.org, { course_id: course.id });
      const person = await t.make.person(caller.org, { roles: [] });
      const named = { course_id: course.id, user_id: person.id, enrolment_method_id: method.id };
      const created = await post({ ...named, external_id: `one-${crypto.randomUUID()}` });
      assert.equal(created.status, 201, created.raw);
      assert.equal(created.body.role, 'student');
      const events = await eventsOf(created.body.id);
      assert.deepEqual(events, [{ type: 'enrolment.created', data: JSON.stringify({ id: created.body.id, course_id: course.id, user_id: person.id, summary: 'User enrolled as student.' }) }]);
      assert.deepEqual(await successEntries(created.body.id), [['createEnrolment', 201]]);

      const expectRefusal = (body: Record<string, unknown>, status: number, code: string, pointer?: string) => createRefused('enrolments', body, status, code, pointer);
      await expectRefusal(named, 409, 'enrolment.exists');
      await expectRefusal({ ...named, course_id: crypto.randomUUID() }, 422, 'validation.invalid_body', '/course_id');
      await expectRefusal({ ...named, user_id: crypto.randomUUID() }, 422, 'validation.invalid_body', '/user_id');
      await expectRefusal({ ...named, enrolment_method_id: crypto.randomUUID() }, 422, 'validation.invalid_body', '/enrolment_method_id');
      const elsewhere = await t.make.enrolmentMethod(caller.org);
      await expectRefusal({ ...named, enrolment_method_id: elsewhere.id }, 422, 'validation.invalid_body', '/enrolment_method_id');
      // The external id is checked by the database, with the INSERT that rides with the COMMIT on PostgreSQL.
      const other = await t.make.person(caller.org, { roles: [] });
      await expectRefusal({ ...named, user_id: other.id, external_id: created.body.external_id }, 409, 'resource.external_id_taken');
      assert.equal((await t.database.db.selectFrom('enrolments').select('id').where('person_id', '=', other.id).execute()).length, 0);

      assert.equal((await request('PATCH', `/enrolment_methods/${method.id}`, { status: 'disabled' })).status, 200);
      await expectRefusal({ ...named, user_id: other.id }, 409, 'enrolment_method.disabled');
      const open = await t.make.enrolmentMethod(caller.org, { course_id: course.id });
      assert.equal((await t.api.request({ host: caller.org.address, key: caller.key, method: 'DELETE', path: `/users/${other.id}` })).status, 204);
      await expectRefusal({ ...named, user_id: other.id, enrolment_method_id: open.id }, 409, 'user.deleted');
      assert.equal((await t.api.request({ host: caller.org.address, key: caller.key, method: 'DELETE', path: `/enrolment_methods/${open.id}` })).status, 204);
      await expectRefusal({ ...named, user_id: (await t.make.person(caller.org, { roles: [] })).id, enrolment_method_id: open.id }, 409, 'enrolment_method.disabled');
      const gone = await t.make.course(caller.org);
      const goneMethod = await t.make.enrolmentMethod(caller.org, { course_id: gone.id });
      assert.equal((await t.api.request({ host: caller.org.address, key: caller.key, method: 'DELETE', path: `/courses/${gone.id}` })).status, 204);
      await expectRefusal({ course_id: gone.id, user_id: person.id, enrolment_method_id: goneMethod.id }, 409, 'course.deleted');
    });

    test('a change answers the enrolment as changed; its event lists what differed, as instants', async () => {
      const enrolment = await t.make.enrolment(caller.org);
      const res = await request('PATCH', `/enrolments/${enrolment.id}`, { role: 'student', status: 'suspended', starts_at: '2027-01-01T00:00:00+01:00', ends_at: '2027-06-30T23:59:59Z' });
      assert.equal(res.status, 200, res.raw);
      assert.equal(res.body.status, 'suspended');
      assert.equal(res.body.starts_at, '2026-12-31T23:00:00.000Z');
      assert.equal(res.body.ends_at, '2027-06-30T23:59:59.000Z');
      // Changed in the same millisecond it was made, perhaps: not before it.
      assert.ok(res.body.updated_at >= enrolment.updated_at);
      const events = await eventsOf(enrolment.id);
      assert.deepEqual(events.map((e) => e.type), ['enrolment.created', 'enrolment.updated']);
      assert.equal(events[1].data, JSON.stringify({ id: enrolment.id, course_id: enrolment.course_id, user_id: enrolment.user_id, summary: 'Enrolment changed: status, starts_at, ends_at.' }));
      assert.deepEqual(await successEntries(enrolment.id), [['updateEnrolment', 200]]);
      assert.deepEqual((await request('GET', `/enrolments/${enrolment.id}`)).body, res.body);

      // The same instant written otherwise is no change; a date set back to null is.
      const again = await request('PATCH', `/enrolments/${enrolment.id}`, { starts_at: '2026-12-31T23:00:00Z', ends_at: null });
      assert.equal(again.body.ends_at, null);
      assert.equal((await eventsOf(enrolment.id)).at(-1)!.data, JSON.stringify({ id: enrolment.id, course_id: enrolment.course_id, user_id: enrolment.user_id, summary: 'Enrolment changed: ends_at.' }));
    });

    test('an instant of the first century reads back as itself (PostgreSQL\'s form of it once read as 1950-2049)', async () => {
      const enrolment = await t.make.enrolment(caller.org);
      const res = await request('PATCH', `/enrolments/${enrolment.id}`, { starts_at: '0050-03-01T12:00:00.250Z', ends_at: '0099-12-31T23:00:00-01:00' });
      assert.equal(res.status, 200, res.raw);
      const asWritten = { starts_at: '0050-03-01T12:00:00.250Z', ends_at: '0100-01-01T00:00:00.000Z' };
      assert.deepEqual({ starts_at: res.body.starts_at, ends_at: res.body.ends_at }, asWritten);
      const read = (await request('GET', `/enrolments/${enrolment.id}`)).body;
      assert.deepEqual({ starts_at: read.starts_at, ends_at: read.ends_at }, asWritten);
    });

    test('a PATCH that changes nothing answers the enrolment as it is, with no event and no new updated_at', async () => {
      const enrolment = await t.make.enrolment(caller.org, { role: 'teacher' });
      await changesNothing(`/enrolments/${enrolment.id}`, { role: 'teacher', status: 'active', starts_at: null }, enrolment, 'enrolment.created', 'updateEnrolment');
    });

    test('refusals: absent 404, deleted 409, dates out of order 422 (against the dates it has)', async () => {
      const absent = crypto.randomUUID();
      await refused(await request('PATCH', `/enrolments/${absent}`, { status: 'suspended' }), 404, 'enrolment.not_found', absent, [], []);

      const enrolment = await t.make.enrolment(caller.org);
      assert.equal((await request('PATCH', `/enrolments/${enrolment.id}`, { starts_at: '2027-02-01T00:00:00Z' })).status, 200);
      const events = await eventsOf(enrolment.id);
      const entries = await successEntries(enrolment.id);
      const early = await request('PATCH', `/enrolments/${enrolment.id}`, { ends_at: '2027-01-01T00:00:00Z' });
      await refused(early, 422, 'validation.invalid_body', enrolment.id, events, entries);
      assert.deepEqual(early.body.errors.map((e: { path: string; code: string }) => [e.path, e.code]), [['/ends_at', 'before_start']]);
      await refused(await request('PATCH', `/enrolments/${enrolment.id}`, { starts_at: '2027-03-01T00:00:00Z', ends_at: '2027-02-15T00:00:00Z' }), 422, 'validation.invalid_body', enrolment.id, events, entries);

      assert.equal((await request('DELETE', `/enrolments/${enrolment.id}`)).status, 204);
      const deleted = await eventsOf(enrolment.id);
      const deletedEntries = await successEntries(enrolment.id);
      await refused(await request('PATCH', `/enrolments/${enrolment.id}`, { status: 'suspended' }), 409, 'enrolment.deleted', enrolment.id, deleted, deletedEntries);
    });

    test('with an Idempotency-Key (the full path, the row read locked): the change, its replay, the delete; a change racing a delete never lands on the ended row', async () => {
      const keyed = (method: 'PATCH' | 'DELETE', path: string, key: string, body?: unknown) =>
        t.api.request({ host: caller.org.address, key: caller.key, method, path, headers: { 'idempotency-key': key }, ...(body === undefined ? {} : { body }) });
      const enrolment = await t.make.enrolment(caller.org);
      const key = `k-${crypto.randomUUID()}`;
      const changed = await keyed('PATCH', `/enrolments/${enrolment.id}`, key, { status: 'suspended' });
      assert.equal(changed.status, 200, changed.raw);
      assert.equal(changed.body.status, 'suspended');
      assert.deepEqual((await keyed('PATCH', `/enrolments/${enrolment.id}`, key, { status: 'suspended' })).body, changed.body);
      const data = (summary: string) => JSON.stringify({ id: enrolment.id, course_id: enrolment.course_id, user_id: enrolment.user_id, summary });
      assert.deepEqual((await eventsOf(enrolment.id)).map((e) => e.data), [data('User enrolled as student.'), data('Enrolment changed: status.')]);
      assert.deepEqual((await request('GET', `/enrolments/${enrolment.id}`)).body, changed.body);
      assert.equal((await keyed('DELETE', `/enrolments/${enrolment.id}`, `k-${crypto.randomUUID()}`)).status, 204);
      assert.deepEqual((await eventsOf(enrolment.id)).at(-1)!.data, data('Enrolment ended.'));
      assert.deepEqual(await tombstones(enrolment.id), [{ resource_type: 'enrolment', external_id: enrolment.external_id }]);
      assert.equal((await keyed('PATCH', `/enrolments/${enrolment.id}`, `k-${crypto.randomUUID()}`, { status: 'active' })).status, 409);
      assert.equal((await keyed('DELETE', `/enrolments/${crypto.randomUUID()}`, `k-${crypto.randomUUID()}`)).status, 404);

      for (let i = 0; i < 5; i++) {
        const raced = await t.make.enrolment(caller.org);
        const [patched, deleted] = await Promise.all([
          keyed('PATCH', `/enrolments/${raced.id}`, `k-${crypto.randomUUID()}`, { role: 'teacher' }),
          keyed('DELETE', `/enrolments/${raced.id}`, `k-${crypto.randomUUID()}`),
        ]);
        assert.equal(deleted.status, 204, deleted.raw);
        const types = (await eventsOf(raced.id)).map((e) => e.type);
        // Either the change came first (and the delete after it), or the delete did and the change was refused.
        if (patched.status === 200) assert.deepEqual(types, ['enrolment.created', 'enrolment.updated', 'enrolment.deleted']);
        else {
          assert.equal(patched.status, 409, patched.raw);
          assert.deepEqual(types, ['enrolment.created', 'enrolment.deleted']);
        }
        const row = await t.database.db.selectFrom('enrolments').select(['role', 'deleted_at']).where('id', '=', raced.id).executeTakeFirstOrThrow();
        assert.ok(row.deleted_at);
        assert.equal(row.role, patched.status === 200 ? 'teacher' : 'student');
      }
    });

    test('a delete leaves the enrolment readable as ended, its tombstone and its event; again 409, absent 404', async () => {
      const enrolment = await t.make.enrolment(caller.org);
      const res = await request('DELETE', `/enrolments/${enrolment.id}`);
      assert.equal(res.status, 204, res.raw);
      const events = await eventsOf(enrolment.id);
      assert.deepEqual(events.map((e) => e.type), ['enrolment.created', 'enrolment.deleted']);
      assert.equal(events[1].data, JSON.stringify({ id: enrolment.id, course_id: enrolment.course_id, user_id: enrolment.user_id, summary: 'Enrolment ended.' }));
      await deletedOnce('enrolments', enrolment, events, { deleted: 'enrolment.deleted', notFound: 'enrolment.not_found' });
    });
  });

  describe('webhook subscriptions', () => {
    const summaryOf = async (id: string) => JSON.parse((await eventsOf(id)).at(-1)!.data);
    const rowOf = (id: string) => t.database.db.selectFrom('webhook_subscriptions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

    test('a create: its ping logged with it (writes that ride with the COMMIT), its event; a URL taken is a 409 that keeps nothing', async () => {
      const post = (body: Record<string, unknown>) => t.api.request({ host: caller.org.address, key: caller.key, method: 'POST', path: '/webhook_subscriptions', body });
      const url = `${t.make.webhookUrl}/hooks/create-${crypto.randomUUID()}`;
      const created = await post({ url, event_types: ['*'] });
      assert.equal(created.status, 201, created.raw);
      assert.deepEqual(await eventsOf(created.body.id), [{ type: 'webhook_subscription.created', data: JSON.stringify({ id: created.body.id, summary: `Webhook subscription to ${new URL(url).host} created.` }) }]);
      assert.deepEqual(await successEntries(created.body.id), [['createWebhookSubscription', 201]]);
      const log = await request('GET', `/webhook_subscriptions/${created.body.id}/deliveries`);
      assert.deepEqual(log.body.data.map((d: { event_type: string; status: string; attempt_log: unknown[] }) => [d.event_type, d.status, d.attempt_log.length]), [['webhook.ping', 'succeeded', 1]]);

      const deliveries = async () => (await t.database.db.selectFrom('webhook_deliveries').select('id').where('organisation_id', '=', caller.org.id).execute()).length;
      const before = await deliveries();
      const taken = await post({ url, event_types: ['*'] });
      assert.equal(taken.status, 409, taken.raw);
      assert.equal(taken.body.code, 'webhook_subscription.url_taken');
      assert.equal(await deliveries(), before, 'the refused create logged no ping');
    });

    test('a change answers the subscription as changed; its event lists what differed, in the service’s order', async () => {
      const subscription = await t.make.webhookSubscription(caller.org, { event_types: ['section.*'] });
      const res = await request('PATCH', `/webhook_subscriptions/${subscription.id}`, {
        event_types: ['course.*', 'course.*', 'section.*'],
        description: 'Sync "quoted"',
        notification_emails: ['ops@example.com'],
        rate_limit_per_minute: 600,
        filters: { course_id: subscription.id },
      });
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual(res.body.event_types, ['course.*', 'section.*']);
      assert.equal(res.body.rate_limit_per_minute, 600);
      // Changed in the same millisecond it was made, perhaps: not before it.
      assert.ok(res.body.updated_at >= subscription.updated_at);
      const events = await eventsOf(subscription.id);
      assert.deepEqual(events.map((e) => e.type), ['webhook_subscription.created', 'webhook_subscription.updated']);
      assert.equal(events[1].data, JSON.stringify({ id: subscription.id, summary: 'Webhook subscription changed: event_types, filters, description, notification_emails, rate_limit_per_minute.' }));
      assert.deepEqual(await successEntries(subscription.id), [['updateWebhookSubscription', 200]]);
      assert.deepEqual((await request('GET', `/webhook_subscriptions/${subscription.id}`)).body, res.body);
    });

    test('disabling sets the reason; enabling an auto-disabled one clears the reason and the failure streak', async () => {
      const subscription = await t.make.webhookSubscription(caller.org);
      const disabled = await request('PATCH', `/webhook_subscriptions/${subscription.id}`, { status: 'disabled', description: null });
      assert.equal(disabled.status, 200);
      assert.equal(disabled.body.disabled_reason, 'Disabled through the API.');
      assert.deepEqual(await summaryOf(subscription.id), { id: subscription.id, summary: 'Webhook subscription changed: status, disabled_reason.' });

      await t.database.db.updateTable('webhook_subscriptions').set({ status: 'auto_disabled', disabled_reason: 'Failing.', consecutive_failures: 7 }).where('id', '=', subscription.id).execute();
      const enabled = await request('PATCH', `/webhook_subscriptions/${subscription.id}`, { status: 'enabled' });
      assert.equal(enabled.status, 200);
      assert.deepEqual([enabled.body.status, enabled.body.disabled_reason, enabled.body.consecutive_failures], ['enabled', null, 0]);
      assert.deepEqual(await summaryOf(subscription.id), { id: subscription.id, summary: 'Webhook subscription changed: status, disabled_reason, consecutive_failures.' });
      // Asked while already so: the reason and the streak stay as they are.
      await t.database.db.updateTable('webhook_subscriptions').set({ consecutive_failures: 2 }).where('id', '=', subscription.id).execute();
      const again = await request('PATCH', `/webhook_subscriptions/${subscription.id}`, { status: 'enabled', rate_limit_per_minute: 60 });
      assert.equal(again.body.consecutive_failures, 2);
      assert.deepEqual(await summaryOf(subscription.id), { id: subscription.id, summary: 'Webhook subscription changed: rate_limit_per_minute.' });
    });

    test('a new URL, verified, takes its verification time; a URL another subscription has is a 409', async () => {
      const subscription = await t.make.webhookSubscription(caller.org);
      const url = `${t.make.webhookUrl}/hooks/moved-${crypto.randomUUID()}`;
      const res = await request('PATCH', `/webhook_subscriptions/${subscription.id}`, { url });
      assert.equal(res.status, 200, res.raw);
      assert.equal(res.body.url, url);
      assert.ok(res.body.verified_at > subscription.verified_at!);
      assert.deepEqual(await summaryOf(subscription.id), { id: subscription.id, summary: 'Webhook subscription changed: url.' });

      const other = await t.make.webhookSubscription(caller.org);
      const events = await eventsOf(subscription.id);
      await refused(await request('PATCH', `/webhook_subscriptions/${subscription.id}`, { url: other.url, description: 'x' }), 409, 'webhook_subscription.url_taken', subscription.id, events, [['updateWebhookSubscription', 200]]);
      assert.equal((await rowOf(subscription.id)).description, null);
    });

    test('a PATCH that changes nothing answers the subscription as it is, with no event and no new updated_at', async () => {
      const subscription = await t.make.webhookSubscription(caller.org, { event_types: ['*'] });
      const body = { event_types: ['*'], status: 'enabled', url: subscription.url, rate_limit_per_minute: subscription.rate_limit_per_minute };
      await changesNothing(`/webhook_subscriptions/${subscription.id}`, body, subscription, 'webhook_subscription.created', 'updateWebhookSubscription');
    });

    test('absent or deleted: 404, nothing written', async () => {
      const absent = crypto.randomUUID();
      await refused(await request('PATCH', `/webhook_subscriptions/${absent}`, { description: 'x' }), 404, 'webhook_subscription.not_found', absent, [], []);
      await refused(await request('DELETE', `/webhook_subscriptions/${absent}`), 404, 'webhook_subscription.not_found', absent, [], []);
      const subscription = await t.make.webhookSubscription(caller.org);
      assert.equal((await request('DELETE', `/webhook_subscriptions/${subscription.id}`)).status, 204);
      const events = await eventsOf(subscription.id);
      await refused(await request('PATCH', `/webhook_subscriptions/${subscription.id}`, { description: 'x' }), 404, 'webhook_subscription.not_found', subscription.id, events, [['deleteWebhookSubscription', 204]]);
      await refused(await request('DELETE', `/webhook_subscriptions/${subscription.id}`), 404, 'webhook_subscription.not_found', subscription.id, events, [['deleteWebhookSubscription', 204]]);
    });

    test('a delete: the row disabled and deleted, its tombstone, its pending deliveries abandoned, its event naming the host as URL writes it', async () => {
      const urls = [
        'https://Hooks.Example.COM/a',
        'https://hooks.example.com:443/x',
        'https://hooks.example.com:8443?x=1',
        'https://h-1.example.org#f',
        'https://10.1.2.3/hooks',
        'https://0x7f.1/hooks',
        'https://1.2.3/hooks',
        'https://xn--bcher-kva.example/',
        'https://bücher.example/',
        'https://user:pw@hooks.example.net/',
        'https://hooks.example.com.:0443/',
        'https://[::1]:8443/',
      ];
      for (const url of urls) {
        const subscription = await t.make.webhookSubscription(caller.org, { url });
        const delivery = await t.app.services.webhooks.sendTest(t.database.db, caller.org.id, subscription.id);
        const res = await request('DELETE', `/webhook_subscriptions/${subscription.id}`);
        assert.equal(res.status, 204, `${url}: ${res.raw}`);
        const events = await eventsOf(subscription.id);
        assert.deepEqual(events.map((e) => e.type), ['webhook_subscription.created', 'webhook_subscription.test_sent', 'webhook_subscription.deleted']);
        assert.equal(events[2].data, JSON.stringify({ id: subscription.id, summary: `Webhook subscription to ${new URL(url).host} deleted.` }), url);
        const row = await rowOf(subscription.id);
        assert.ok(row.deleted_at);
        assert.deepEqual([row.status, row.disabled_reason], ['disabled', 'Deleted.']);
        assert.deepEqual(await tombstones(subscription.id), [{ resource_type: 'webhook_subscription', external_id: null }]);
        const abandoned = await t.database.db.selectFrom('webhook_deliveries').select(['status', 'last_error', 'leased_until']).where('id', '=', delivery.id).executeTakeFirstOrThrow();
        assert.deepEqual({ ...abandoned }, { status: 'failed', last_error: 'The subscription was deleted.', leased_until: null });
        assert.deepEqual(await successEntries(subscription.id), [['deleteWebhookSubscription', 204]]);
      }
    });
  });
});
