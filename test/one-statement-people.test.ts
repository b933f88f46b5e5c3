// The PATCHes and DELETEs of courses, categories, users and roles without an Idempotency-Key are, on PostgreSQL,
// one statement sent with their audit entry and COMMIT (src/db/final-statement.ts); refused there, or on SQLite,
// the request takes its full path. Both must answer, record and refuse alike: this file runs on both engines and
// holds them to the same outcomes, byte for byte where an event's data is concerned.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestAppWithCaller, type TestContext } from './support/harness.ts';
import type { Caller } from './support/factories.ts';
import { writeTraces } from './support/write-traces.ts';

describe('PATCH and DELETE of courses, categories, users and roles: in one statement or on the full path, alike', () => {
  let t: TestContext;
  /** An administrator of the organisation every test works in. */
  let caller: Caller;
  after(() => t?.close());
  before(async () => ({ t, caller } = await startTestAppWithCaller()));

  type Method = 'GET' | 'PATCH' | 'DELETE' | 'POST';
  const callAs = (who: Caller, method: Method, path: string, body?: unknown) => t.api.request({ host: who.org.address, key: who.key, method, path, ...(body === undefined ? {} : { body }) });
  const call = (method: Method, path: string, body?: unknown) => callAs(caller, method, path, body);
  const { eventsOf, tombstonesOf, ...traces } = writeTraces(() => ({ t, caller }));
  const successEntries = (id: string) => traces.successEntries(id, ['action', 'status', 'changed_fields']);
  const epoch = async () => Number((await t.database.db.selectFrom('organisations').select('credentials_epoch').where('id', '=', caller.org.id).executeTakeFirstOrThrow()).credentials_epoch);
  /** PATCH of an absent row: 404 `<kind>.not_found`; of the row `deletedId`, deleted here first: 409 `<kind>.deleted`. */
  const patchRefusedWhenAbsentOrDeleted = async (collection: string, kind: string, deletedId: string, body: unknown) => {
    const absent = await call('PATCH', `/${collection}/${crypto.randomUUID()}`, body);
    assert.deepEqual([absent.status, absent.body.code], [404, `${kind}.not_found`]);
    assert.equal((await call('DELETE', `/${collection}/${deletedId}`)).status, 204);
    const gone = await call('PATCH', `/${collection}/${deletedId}`, body);
    assert.deepEqual([gone.status, gone.body.code], [409, `${kind}.deleted`]);
  };
  /** PATCH `path` with `body`, which asks for what `row` already is: the row as it is, no event, one audit entry. */
  const patchChangesNothing = async (path: string, row: { id: string }, body: unknown, created: string) => {
    const res = await call('PATCH', path, body);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, row);
    assert.deepEqual((await eventsOf(row.id)).map((e) => e.type), [created]);
    assert.equal((await successEntries(row.id)).filter((e) => e.action.startsWith('update')).length, 1);
  };
  /**
   * PATCH `path` with `body` (a millisecond after `before` was made, so that its updated_at can be later): the
   * answer is `before` with `expected` and a later updated_at, and reads back as answered.
   */
  const patchAnswers = async (path: string, before: { updated_at: string }, body: unknown, expected: Record<string, unknown>) => {
    await new Promise((resolve) => setTimeout(resolve, 2));
    const res = await call('PATCH', path, body);
    assert.equal(res.status, 200, res.raw);
    assert.deepEqual({ ...res.body, updated_at: undefined }, { ...before, ...expected, updated_at: undefined });
    assert.ok(res.body.updated_at > before.updated_at);
    assert.deepEqual((await call('GET', path)).body, res.body);
    return res;
  };
  const names = ['Plain', 'Quotes " and \\ and\nnew line', 'Ünïcödé ☃ 𝄞 and \u2028', 'x'.repeat(120)];

  describe('PATCH /courses/{id}', () => {
    test('a change answers the course as changed; its event names the short name before the change and the fields changed, in the patch order', async () => {
      for (const shortname of names) {
        const category = await t.make.category(caller.org);
        const course = await t.make.course(caller.org, { shortname });
        const asked = { visible: false, fullname: 'Renamed', shortname: 'NEW', category_id: category.id };
        await patchAnswers(`/courses/${course.id}`, course, asked, asked);
        const events = await eventsOf(course.id);
        assert.deepEqual(events.map((e) => e.type), ['course.created', 'course.updated']);
        assert.equal(events[1].data, JSON.stringify({ id: course.id, summary: `Course ${JSON.stringify(shortname)} changed: visible, fullname, shortname, category_id.` }));
        assert.deepEqual(await successEntries(course.id), [{ action: 'updateCourse', status: 200, changed_fields: '["visible","fullname","shortname","category_id"]' }]);
      }
    });

    test('only what differs is named; a course taken out of its category', async () => {
      const category = await t.make.category(caller.org);
      const course = await t.make.course(caller.org, { fullname: 'Same', category_id: category.id });
      const res = await call('PATCH', `/courses/${course.id}`, { fullname: 'Same', category_id: null });
      assert.equal(res.status, 200);
      assert.equal(res.body.category_id, null);
      assert.equal((await eventsOf(course.id))[1].data, JSON.stringify({ id: course.id, summary: `Course ${JSON.stringify(course.shortname)} changed: category_id.` }));
    });

    test('a PATCH that changes nothing answers the course as it is: no event, no new updated_at', async () => {
      const course = await t.make.course(caller.org, { fullname: 'Same' });
      await patchChangesNothing(`/courses/${course.id}`, course, { fullname: 'Same', visible: true }, 'course.created');
    });

    test('absent 404, deleted 409, a category absent or deleted 422, each with no event and no change', async () => {
      await patchRefusedWhenAbsentOrDeleted('courses', 'course', (await t.make.course(caller.org)).id, { fullname: 'Too late' });

      const course = await t.make.course(caller.org);
      const removedCategory = await t.make.category(caller.org);
      assert.equal((await call('DELETE', `/categories/${removedCategory.id}`)).status, 204);
      for (const categoryId of [crypto.randomUUID(), removedCategory.id]) {
        const res = await call('PATCH', `/courses/${course.id}`, { fullname: 'Moved', category_id: categoryId });
        assert.equal(res.status, 422);
        assert.deepEqual(res.body.errors.map((e: { path: string; code: string }) => [e.path, e.code]), [['/category_id', 'not_found']]);
      }
      assert.deepEqual((await call('GET', `/courses/${course.id}`)).body, course);
      assert.deepEqual((await eventsOf(course.id)).map((e) => e.type), ['course.created']);
      assert.deepEqual(await successEntries(course.id), []);
    });
  });

  describe('PATCH /categories/{id}', () => {
    test('a change answers the category as changed; its event names the name before the change and the fields changed', async () => {
      for (const name of names) {
        const parent = await t.make.category(caller.org);
        const category = await t.make.category(caller.org, { name });
        const asked = { parent_id: parent.id, name: 'Renamed' };
        await patchAnswers(`/categories/${category.id}`, category, asked, asked);
        const events = await eventsOf(category.id);
        assert.deepEqual(events.map((e) => e.type), ['category.created', 'category.updated']);
        assert.equal(events[1].data, JSON.stringify({ id: category.id, summary: `Category ${JSON.stringify(name)} changed: parent_id, name.` }));
        assert.deepEqual(await successEntries(category.id), [{ action: 'updateCategory', status: 200, changed_fields: '["parent_id","name"]' }]);
      }
    });

    test('a PATCH that changes nothing: no event, no new updated_at', async () => {
      const category = await t.make.category(caller.org, { name: 'Same' });
      await patchChangesNothing(`/categories/${category.id}`, category, { name: 'Same', parent_id: null }, 'category.created');
    });

    test('absent 404, deleted 409, its own parent 422, a parent absent or deleted 422', async () => {
      const deleted = await t.make.category(caller.org);
      await patchRefusedWhenAbsentOrDeleted('categories', 'category', deleted.id, { name: 'Too late' });

      const category = await t.make.category(caller.org);
      for (const parentId of [category.id, crypto.randomUUID(), deleted.id]) {
        const res = await call('PATCH', `/categories/${category.id}`, { name: 'Moved', parent_id: parentId });
        assert.equal(res.status, 422);
        assert.deepEqual(res.body.errors.map((e: { path: string }) => e.path), ['/parent_id']);
      }
      assert.deepEqual((await call('GET', `/categories/${category.id}`)).body, category);
      assert.deepEqual((await eventsOf(category.id)).map((e) => e.type), ['category.created']);
    });
  });

  describe('PATCH /users/{id}', () => {
    const sessionFor = (personId: string) =>
      t.database.db
        .insertInto('sessions')
        .values({ id: crypto.randomUUID(), token_hash: crypto.randomUUID(), organisation_id: caller.org.id, person_id: personId, created_at: new Date().toISOString(), last_seen_at: new Date().toISOString(), expires_at: new Date(Date.now() + 3600_000).toISOString(), flash: null })
        .execute();
    const sessionsOf = async (personId: string) => (await t.database.db.selectFrom('sessions').select('id').where('person_id', '=', personId).execute()).length;

    test('a change of name and address answers the person as changed; its event names the new name and the fields changed; no epoch bump', async () => {
      for (const name of names) {
        const person = (await call('POST', '/users', { email: `n-${crypto.randomUUID()}@example.test`, name: 'Before' })).body;
        const before = await epoch();
        await patchAnswers(`/users/${person.id}`, person, { email: `New-${person.id}@Example.TEST`, name }, { name, email: `new-${person.id}@example.test` });
        const events = await eventsOf(person.id);
        assert.deepEqual(events.map((e) => e.type), ['user.created', 'user.updated']);
        assert.equal(events[1].data, JSON.stringify({ id: person.id, summary: `User ${JSON.stringify(name)} changed (name, email).` }));
        assert.deepEqual((await successEntries(person.id)).map((e) => [e.action, e.status]), [['createUser', 201], ['updateUser', 200]]);
        assert.equal(await epoch(), before);
      }
    });

    test('a suspension ends the person’s sessions and refuses their key on the next request; made active again, the key works again', async () => {
      const member = await t.make.caller({ org: caller.org, roles: ['teacher'] });
      await sessionFor(member.personId);
      assert.equal((await callAs(member, 'GET', '/me')).status, 200);
      const before = await epoch();
      const res = await call('PATCH', `/users/${member.personId}`, { status: 'suspended' });
      assert.equal(res.status, 200);
      assert.equal(res.body.status, 'suspended');
      assert.equal(await sessionsOf(member.personId), 0);
      assert.equal(await epoch(), before + 1);
      assert.equal((await callAs(member, 'GET', '/me')).status, 401);
      const events = await eventsOf(member.personId);
      assert.equal(events.at(-1)!.data, JSON.stringify({ id: member.personId, summary: `User ${JSON.stringify(res.body.name)} changed (status).` }));

      const back = await call('PATCH', `/users/${member.personId}`, { status: 'active', name: 'Back again' });
      assert.equal(back.status, 200);
      assert.equal(await epoch(), before + 2);
      assert.equal((await callAs(member, 'GET', '/me')).status, 200);
      assert.equal((await eventsOf(member.personId)).at(-1)!.data, JSON.stringify({ id: member.personId, summary: 'User "Back again" changed (name, status).' }));
    });

    test('a PATCH that changes nothing: no event, no new updated_at, no epoch bump, sessions kept', async () => {
      const person = (await call('POST', '/users', { email: `same-${crypto.randomUUID()}@example.test`, name: 'Same' })).body;
      await sessionFor(person.id);
      const before = await epoch();
      await patchChangesNothing(`/users/${person.id}`, person, { name: 'Same', email: person.email.toUpperCase(), status: 'active' }, 'user.created');
      assert.equal(await epoch(), before);
      assert.equal(await sessionsOf(person.id), 1);
    });

    test('absent 404, removed 409, an address taken (by a removed person too) 409, oneself suspended 409, the last administrator suspended 409', async () => {
      const absent = await call('PATCH', `/users/${crypto.randomUUID()}`, { name: 'Nobody' });
      assert.deepEqual([absent.status, absent.body.code], [404, 'user.not_found']);

      const removed = (await call('POST', '/users', { email: `gone-${crypto.randomUUID()}@example.test`, name: 'Gone' })).body;
      assert.equal((await call('DELETE', `/users/${removed.id}`)).status, 204);
      const gone = await call('PATCH', `/users/${removed.id}`, { name: 'Too late' });
      assert.deepEqual([gone.status, gone.body.code], [409, 'user.deleted']);

      const person = (await call('POST', '/users', { email: `mine-${crypto.randomUUID()}@example.test`, name: 'Mine' })).body;
      const other = (await call('POST', '/users', { email: `other-${crypto.randomUUID()}@example.test`, name: 'Other' })).body;
      for (const email of [other.email.toUpperCase(), removed.email]) {
        const taken = await call('PATCH', `/users/${person.id}`, { name: 'Renamed', email });
        assert.deepEqual([taken.status, taken.body.code], [409, 'user.email_taken']);
      }
      assert.deepEqual((await call('GET', `/users/${person.id}`)).body, person);
      assert.deepEqual((await eventsOf(person.id)).map((e) => e.type), ['user.created']);

      const self = await call('PATCH', `/users/${caller.personId}`, { status: 'suspended' });
      assert.deepEqual([self.status, self.body.code], [409, 'user.self']);

      const org = await t.make.org();
      const onlyAdmin = await t.make.person(org, { roles: ['admin'] });
      const manager = await t.make.caller({ org, roles: ['manager'], platformAdmin: false });
      const last = await callAs(manager, 'PATCH', `/users/${onlyAdmin.id}`, { status: 'suspended' });
      assert.deepEqual([last.status, last.body.code], [409, 'user.last_admin']);
      assert.equal((await callAs(manager, 'GET', `/users/${onlyAdmin.id}`)).body.status, 'active');
      // With another administrator, one may be suspended (the full path, under the organisation's lock).
      await t.make.person(org, { roles: ['admin'] });
      const allowed = await callAs(manager, 'PATCH', `/users/${onlyAdmin.id}`, { status: 'suspended' });
      assert.deepEqual([allowed.status, allowed.body.status], [200, 'suspended']);
    });
  });

  describe('PATCH and DELETE /roles/{key}', () => {
    // A role's name is at most 100 characters.
    const roleNames = names.map((name) => name.slice(0, 100));
    const role = async (name = 'Custom role', capabilities = ['course/view']) => (await call('POST', '/roles', { key: `r_${crypto.randomUUID().slice(0, 8)}`, name, capabilities })).body;
    const roleEvents = async (key: string) =>
      (await t.database.db.selectFrom('outbox_events').select(['type', 'data']).where('organisation_id', '=', caller.org.id).where('data', 'like', `%"key":"${key}"%`).orderBy('id').execute()).map((e) => ({ ...e }));
    /** A person holding `key`, and their API key. */
    const holder = async (key: string): Promise<Caller> => {
      const person = (await call('POST', '/users', { email: `h-${crypto.randomUUID()}@example.test`, name: 'Holder', roles: [key] })).body;
      const apiKey = await t.make.apiKey(caller.org, person.id);
      return { org: caller.org, personId: person.id, key: apiKey.key, keyId: apiKey.id };
    };

    test('a change answers the role as changed; its event names the new name and the fields changed; new capabilities apply on the holder’s next request', async () => {
      for (const name of roleNames) {
        const created = await role('Before', ['course/view']);
        const member = await holder(created.key);
        assert.equal((await callAs(member, 'GET', '/courses')).status, 200);
        const before = await epoch();
        const asked = { capabilities: ['course/create', 'course/update'], name };
        await patchAnswers(`/roles/${created.key}`, created, asked, asked);
        assert.equal(await epoch(), before + 1);
        assert.equal((await callAs(member, 'GET', '/courses')).status, 403);
        const events = await roleEvents(created.key);
        assert.deepEqual(events.map((e) => e.type), ['role.created', 'role.updated']);
        const id = JSON.parse(events[0].data).id;
        assert.equal(events[1].data, JSON.stringify({ id, key: created.key, summary: `Role ${JSON.stringify(name)} changed (name, capabilities).` }));
      }
    });

    test('a new name alone bumps no epoch; capabilities in a new order are no change', async () => {
      const created = await role('Before', ['course/view', 'course/create']);
      const before = await epoch();
      const renamed = await call('PATCH', `/roles/${created.key}`, { name: 'After', capabilities: ['course/create', 'course/view'] });
      assert.equal(renamed.status, 200);
      assert.deepEqual(renamed.body.capabilities, ['course/view', 'course/create']);
      assert.equal(await epoch(), before);
      assert.equal((await roleEvents(created.key)).at(-1)!.data.endsWith(`"summary":"Role \\"After\\" changed (name)."}`), true);

      const same = await call('PATCH', `/roles/${created.key}`, { name: 'After', capabilities: ['course/create', 'course/view'] });
      assert.equal(same.status, 200);
      assert.deepEqual(same.body, renamed.body);
      assert.deepEqual((await roleEvents(created.key)).map((e) => e.type), ['role.created', 'role.updated']);
      assert.equal(await epoch(), before);
    });

    test('PATCH: absent 404, built in 409, no event', async () => {
      const absent = await call('PATCH', '/roles/nobody_here', { name: 'Nobody' });
      assert.deepEqual([absent.status, absent.body.code], [404, 'role.not_found']);
      const builtIn = await call('PATCH', '/roles/teacher', { name: 'Teachers' });
      assert.deepEqual([builtIn.status, builtIn.body.code], [409, 'role.built_in']);
      assert.equal((await call('GET', '/roles/teacher')).body.name, 'Teacher');
    });

    test('a delete: the role gone, its event; absent 404, built in 409, still held 409 (by a removed person no more)', async () => {
      for (const name of roleNames) {
        const created = await role(name);
        const res = await call('DELETE', `/roles/${created.key}`);
        assert.equal(res.status, 204);
        assert.equal((await call('GET', `/roles/${created.key}`)).status, 404);
        const events = await roleEvents(created.key);
        assert.deepEqual(events.map((e) => e.type), ['role.created', 'role.deleted']);
        assert.equal(events[1].data, JSON.stringify({ id: JSON.parse(events[0].data).id, key: created.key, summary: `Role ${JSON.stringify(name)} deleted.` }));
        assert.deepEqual([(await call('DELETE', `/roles/${created.key}`)).status], [404]);
      }
      const builtIn = await call('DELETE', '/roles/teacher');
      assert.deepEqual([builtIn.status, builtIn.body.code], [409, 'role.built_in']);

      const held = await role();
      const member = await holder(held.key);
      const inUse = await call('DELETE', `/roles/${held.key}`);
      assert.deepEqual([inUse.status, inUse.body.code], [409, 'role.in_use']);
      assert.deepEqual((await roleEvents(held.key)).map((e) => e.type), ['role.created']);
      assert.equal((await call('DELETE', `/users/${member.personId}`)).status, 204);
      assert.equal((await call('DELETE', `/roles/${held.key}`)).status, 204);
    });
  });

  describe('DELETE /courses/{id}', () => {
    const uuidV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

    test('a course deleted ends its live enrolments, each with its tombstone and event, before the course’s own event, which counts them', async () => {
      for (const shortname of names) {
        const course = await t.make.course(caller.org, { shortname });
        const enrolments = [await t.make.enrolment(caller.org, { course_id: course.id }), await t.make.enrolment(caller.org, { course_id: course.id }), await t.make.enrolment(caller.org, { course_id: course.id })];
        assert.equal((await call('DELETE', `/enrolments/${enrolments[2].id}`)).status, 204);
        const other = await t.make.enrolment(caller.org);
        const res = await call('DELETE', `/courses/${course.id}`);
        assert.equal(res.status, 204);

        const ended = enrolments.slice(0, 2);
        const events = (await t.database.db.selectFrom('outbox_events').select(['id', 'type', 'data']).where('organisation_id', '=', caller.org.id).where('type', 'in', ['enrolment.deleted', 'course.deleted']).orderBy('id').execute()).filter((e) => e.data.includes(course.id));
        // The enrolment already ended has its own earlier event, not a second one.
        const endedNow = events.filter((e) => !e.data.includes(enrolments[2].id));
        assert.deepEqual(endedNow.map((e) => e.type), ['enrolment.deleted', 'enrolment.deleted', 'course.deleted']);
        assert.deepEqual(
          endedNow.slice(0, 2).map((e) => JSON.parse(e.data).id).sort(),
          ended.map((e) => e.id).sort(),
        );
        for (const e of endedNow.slice(0, 2)) {
          const enrolment = ended.find((x) => x.id === JSON.parse(e.data).id)!;
          assert.equal(e.data, JSON.stringify({ id: enrolment.id, course_id: course.id, user_id: enrolment.user_id, summary: 'Enrolment ended: the course was deleted.' }));
        }
        assert.equal(endedNow[2].data, JSON.stringify({ id: course.id, summary: `Course ${JSON.stringify(shortname)} deleted; 2 enrolment(s) ended.` }));
        assert.ok(endedNow.every((e) => uuidV7.test(e.id)), endedNow.map((e) => e.id).join(' '));

        for (const e of ended) {
          const read = await call('GET', `/enrolments/${e.id}`);
          assert.ok(read.body.deleted_at);
        }
        assert.equal((await call('GET', `/enrolments/${other.id}`)).body.deleted_at, null);
        assert.ok((await call('GET', `/courses/${course.id}`)).body.deleted_at);
        // Tombstones: the course's first, then its enrolments'.
        const tombstones = await t.database.db.selectFrom('deletions').select(['id', 'resource_type', 'resource_id', 'external_id']).where('resource_id', 'in', [course.id, ...ended.map((e) => e.id)]).orderBy('id').execute();
        assert.deepEqual(tombstones.map((r) => r.resource_type), ['course', 'enrolment', 'enrolment']);
        assert.deepEqual(tombstones.slice(1).map((r) => r.external_id).sort(), ended.map((e) => e.external_id).sort());
        assert.ok(tombstones.every((r) => uuidV7.test(r.id)));
        assert.deepEqual((await successEntries(course.id)).map((e) => [e.action, e.status]), [['deleteCourse', 204]]);
        const listed = await call('GET', '/enrolments/deletions');
        assert.ok(ended.every((e) => listed.body.data.some((d: { id: string }) => d.id === e.id)));
      }
    });

    test('a course without enrolments: its event says so; deleted again 409; absent 404', async () => {
      const course = await t.make.course(caller.org);
      assert.equal((await call('DELETE', `/courses/${course.id}`)).status, 204);
      assert.deepEqual(await eventsOf(course.id), [
        { type: 'course.created', data: JSON.stringify({ id: course.id, summary: `Course ${JSON.stringify(course.shortname)} created.` }) },
        { type: 'course.deleted', data: JSON.stringify({ id: course.id, summary: `Course ${JSON.stringify(course.shortname)} deleted.` }) },
      ]);
      assert.deepEqual(await tombstonesOf(course.id), [{ resource_type: 'course', external_id: course.external_id }]);
      const again = await call('DELETE', `/courses/${course.id}`);
      assert.deepEqual([again.status, again.body.code], [409, 'course.deleted']);
      const absent = await call('DELETE', `/courses/${crypto.randomUUID()}`);
      assert.deepEqual([absent.status, absent.body.code], [404, 'course.not_found']);
      assert.equal((await eventsOf(course.id)).length, 2);
      assert.equal((await tombstonesOf(course.id)).length, 1);
    });
  });

  describe('DELETE /users/{id}', () => {
    test('a person removed: sessions ended, key refused on the next request, live enrolments ended with tombstones and events before the person’s own', async () => {
      for (const name of names) {
        const member = await t.make.caller({ org: caller.org, roles: ['teacher'] });
        await t.database.db.updateTable('people').set({ name }).where('id', '=', member.personId).execute();
        await t.database.db
          .insertInto('sessions')
          .values({ id: crypto.randomUUID(), token_hash: crypto.randomUUID(), organisation_id: caller.org.id, person_id: member.personId, created_at: new Date().toISOString(), last_seen_at: new Date().toISOString(), expires_at: new Date(Date.now() + 3600_000).toISOString(), flash: null })
          .execute();
        const enrolments = [await t.make.enrolment(caller.org, { user_id: member.personId }), await t.make.enrolment(caller.org, { user_id: member.personId })];
        const other = await t.make.enrolment(caller.org, { course_id: enrolments[0].course_id });
        assert.equal((await callAs(member, 'GET', '/me')).status, 200);
        const before = await epoch();

        const res = await call('DELETE', `/users/${member.personId}`);
        assert.equal(res.status, 204);
        assert.equal((await callAs(member, 'GET', '/me')).status, 401);
        assert.equal(await epoch(), before + 1);
        assert.equal((await t.database.db.selectFrom('sessions').select('id').where('person_id', '=', member.personId).execute()).length, 0);
        assert.ok((await call('GET', `/users/${member.personId}`)).body.deleted_at);
        for (const e of enrolments) assert.ok((await call('GET', `/enrolments/${e.id}`)).body.deleted_at);
        assert.equal((await call('GET', `/enrolments/${other.id}`)).body.deleted_at, null);

        const events = (await t.database.db.selectFrom('outbox_events').select(['type', 'data']).where('organisation_id', '=', caller.org.id).where('type', 'in', ['enrolment.deleted', 'user.deleted']).orderBy('id').execute()).filter((e) => e.data.includes(member.personId));
        assert.deepEqual(events.map((e) => e.type), ['enrolment.deleted', 'enrolment.deleted', 'user.deleted']);
        for (const e of events.slice(0, 2)) {
          const enrolment = enrolments.find((x) => x.id === JSON.parse(e.data).id)!;
          assert.equal(e.data, JSON.stringify({ id: enrolment.id, course_id: enrolment.course_id, user_id: member.personId, summary: 'Enrolment ended: the user was deleted.' }));
        }
        assert.equal(events[2].data, JSON.stringify({ id: member.personId, summary: `User ${JSON.stringify(name)} removed.` }));
        // Tombstones: the enrolments' first, then the person's.
        const tombstones = await t.database.db.selectFrom('deletions').select(['resource_type', 'external_id']).where('resource_id', 'in', [member.personId, ...enrolments.map((e) => e.id)]).orderBy('id').execute();
        assert.deepEqual(tombstones.map((r) => r.resource_type), ['enrolment', 'enrolment', 'user']);
        assert.deepEqual((await successEntries(member.personId)).map((e) => [e.action, e.status]), [['deleteUser', 204]]);
      }
    });

    test('absent 404, removed 409, oneself 409, the last active administrator 409; another administrator may go', async () => {
      const absent = await call('DELETE', `/users/${crypto.randomUUID()}`);
      assert.deepEqual([absent.status, absent.body.code], [404, 'user.not_found']);
      const person = (await call('POST', '/users', { email: `twice-${crypto.randomUUID()}@example.test`, name: 'Twice' })).body;
      assert.equal((await call('DELETE', `/users/${person.id}`)).status, 204);
      const again = await call('DELETE', `/users/${person.id}`);
      assert.deepEqual([again.status, again.body.code], [409, 'user.deleted']);
      assert.deepEqual((await eventsOf(person.id)).map((e) => e.type), ['user.created', 'user.deleted']);
      assert.deepEqual(await tombstonesOf(person.id), [{ resource_type: 'user', external_id: null }]);

      const self = await call('DELETE', `/users/${caller.personId}`);
      assert.deepEqual([self.status, self.body.code], [409, 'user.self']);

      const org = await t.make.org();
      const onlyAdmin = await t.make.person(org, { roles: ['admin'] });
      const manager = await t.make.caller({ org, roles: ['manager'], platformAdmin: false });
      const last = await callAs(manager, 'DELETE', `/users/${onlyAdmin.id}`);
      assert.deepEqual([last.status, last.body.code], [409, 'user.last_admin']);
      assert.equal((await callAs(manager, 'GET', `/users/${onlyAdmin.id}`)).body.deleted_at, null);
      await t.make.person(org, { roles: ['admin'] });
      assert.equal((await callAs(manager, 'DELETE', `/users/${onlyAdmin.id}`)).status, 204);
      // A suspended administrator is no active one: removed without the rule.
      const suspendedAdmin = await t.make.person(org, { roles: ['admin'] });
      assert.equal((await callAs(manager, 'PATCH', `/users/${suspendedAdmin.id}`, { status: 'suspended' })).status, 200);
      assert.equal((await callAs(manager, 'DELETE', `/users/${suspendedAdmin.id}`)).status, 204);
    });
  });

  describe('POST /users and POST /roles: the insert a deferred write, its refusals as before', () => {
    test('a person created: the answer, the row, the event; an address taken 409 (saying when by a removed person), an external id taken 409', async () => {
      const email = `new-${crypto.randomUUID()}@example.test`;
      const res = await call('POST', '/users', { email: email.toUpperCase(), name: 'New "one"', roles: ['teacher'], external_id: `ext-${email}` });
      assert.equal(res.status, 201);
      assert.deepEqual((await call('GET', `/users/${res.body.id}`)).body, res.body);
      assert.equal(res.body.email, email);
      assert.deepEqual(await eventsOf(res.body.id), [{ type: 'user.created', data: JSON.stringify({ id: res.body.id, summary: 'User "New \\"one\\"" added.' }) }]);

      const taken = await call('POST', '/users', { email, name: 'Again' });
      assert.deepEqual([taken.status, taken.body.code, taken.body.detail], [409, 'user.email_taken', `Another user of this organisation has the e-mail address ${email}.`]);
      assert.equal((await call('DELETE', `/users/${res.body.id}`)).status, 204);
      const takenByRemoved = await call('POST', '/users', { email, name: 'Again' });
      assert.deepEqual([takenByRemoved.status, takenByRemoved.body.code, takenByRemoved.body.detail], [409, 'user.email_taken', `Another user of this organisation (removed) has the e-mail address ${email}.`]);

      const externalTaken = await call('POST', '/users', { email: `other-${email}`, name: 'Other', external_id: `ext-${email}` });
      assert.deepEqual([externalTaken.status, externalTaken.body.code], [409, 'resource.external_id_taken']);
      assert.equal((await call('GET', `/users?email=other-${email}`)).body.data.length, 0);
    });

    test('a role created: the answer, the event; a key taken 409, a built-in key 409, nothing written', async () => {
      const key = `k_${crypto.randomUUID().slice(0, 8)}`;
      const res = await call('POST', '/roles', { key, name: 'Keyed', capabilities: ['course/view'] });
      assert.equal(res.status, 201);
      assert.deepEqual((await call('GET', `/roles/${key}`)).body, res.body);
      const taken = await call('POST', '/roles', { key, name: 'Again', capabilities: [] });
      assert.deepEqual([taken.status, taken.body.code], [409, 'role.key_taken']);
      assert.equal((await call('GET', `/roles/${key}`)).body.name, 'Keyed');
      const builtIn = await call('POST', '/roles', { key: 'teacher', name: 'Teachers', capabilities: [] });
      assert.deepEqual([builtIn.status, builtIn.body.code], [409, 'role.key_taken']);
      const events = (await t.database.db.selectFrom('outbox_events').select(['type', 'data']).where('organisation_id', '=', caller.org.id).where('data', 'like', `%"key":"${key}"%`).execute()).map((e) => e.type);
      assert.deepEqual(events, ['role.created']);
    });
  });

  describe('DELETE with an Idempotency-Key (on PostgreSQL one statement that answers, then the record)', () => {
    const keyed = (who: Caller, path: string, key: string) => t.api.request({ host: who.org.address, key: who.key, method: 'DELETE', path, headers: { 'idempotency-key': key } });

    test('a course: its enrolments end with their events and tombstones; the key replays; absent 404, deleted 409', async () => {
      const course = await t.make.course(caller.org);
      const enrolment = await t.make.enrolment(caller.org, { course_id: course.id });
      const key = `k-${crypto.randomUUID()}`;
      assert.equal((await keyed(caller, `/courses/${course.id}`, key)).status, 204);
      const replay = await keyed(caller, `/courses/${course.id}`, key);
      assert.equal(replay.status, 204);
      assert.equal(replay.headers['idempotency-replayed'], 'true');
      const events = (await t.database.db.selectFrom('outbox_events').select(['type', 'data']).where('organisation_id', '=', caller.org.id).where('type', 'in', ['enrolment.deleted', 'course.deleted']).orderBy('id').execute()).filter((e) => e.data.includes(course.id));
      assert.deepEqual(
        events.map((e) => e.data),
        [
          JSON.stringify({ id: enrolment.id, course_id: course.id, user_id: enrolment.user_id, summary: 'Enrolment ended: the course was deleted.' }),
          JSON.stringify({ id: course.id, summary: `Course ${JSON.stringify(course.shortname)} deleted; 1 enrolment(s) ended.` }),
        ],
      );
      const tombstones = await t.database.db.selectFrom('deletions').select('resource_type').where('resource_id', 'in', [course.id, enrolment.id]).orderBy('id').execute();
      assert.deepEqual(tombstones.map((r) => r.resource_type), ['course', 'enrolment']);
      assert.deepEqual((await successEntries(course.id)).map((e) => [e.action, e.status]), [['deleteCourse', 204]]);
      const again = await keyed(caller, `/courses/${course.id}`, `k-${crypto.randomUUID()}`);
      assert.deepEqual([again.status, again.body.code], [409, 'course.deleted']);
      const absent = await keyed(caller, `/courses/${crypto.randomUUID()}`, `k-${crypto.randomUUID()}`);
      assert.deepEqual([absent.status, absent.body.code], [404, 'course.not_found']);
    });

    test('a person: sessions, epoch, enrolments as without a key; the last active administrator 409', async () => {
      const member = await t.make.caller({ org: caller.org, roles: ['teacher'] });
      const enrolment = await t.make.enrolment(caller.org, { user_id: member.personId });
      const before = await epoch();
      assert.equal((await keyed(caller, `/users/${member.personId}`, `k-${crypto.randomUUID()}`)).status, 204);
      assert.equal(await epoch(), before + 1);
      assert.equal((await callAs(member, 'GET', '/me')).status, 401);
      assert.ok((await call('GET', `/enrolments/${enrolment.id}`)).body.deleted_at);
      const events = (await t.database.db.selectFrom('outbox_events').select(['type', 'data']).where('organisation_id', '=', caller.org.id).where('type', 'in', ['enrolment.deleted', 'user.deleted']).orderBy('id').execute()).filter((e) => e.data.includes(member.personId));
      assert.deepEqual(events.map((e) => e.type), ['enrolment.deleted', 'user.deleted']);
      const tombstones = await t.database.db.selectFrom('deletions').select('resource_type').where('resource_id', 'in', [member.personId, enrolment.id]).orderBy('id').execute();
      assert.deepEqual(tombstones.map((r) => r.resource_type), ['enrolment', 'user']);

      const org = await t.make.org();
      const onlyAdmin = await t.make.person(org, { roles: ['admin'] });
      const manager = await t.make.caller({ org, roles: ['manager'], platformAdmin: false });
      const last = await keyed(manager, `/users/${onlyAdmin.id}`, `k-${crypto.randomUUID()}`);
      assert.deepEqual([last.status, last.body.code], [409, 'user.last_admin']);
      const gone = await keyed(caller, `/users/${member.personId}`, `k-${crypto.randomUUID()}`);
      assert.deepEqual([gone.status, gone.body.code], [409, 'user.deleted']);
    });
  });

  describe('POST /users/bulk in batch: the answers, rows and events of the one-by-one run', () => {
    const bulk = async (operations: unknown[]) => {
      const res = await t.api.request({ method: 'POST', path: '/users/bulk', host: caller.org.address, key: caller.key, headers: { 'idempotency-key': `b-${crypto.randomUUID()}` }, body: { operations } });
      assert.equal(res.status, 200, res.raw);
      return res.body.results as Array<{ ref: string; status: number; data?: { id: string; name: string; email: string; roles: string[] }; error?: { code: string; detail: string }; unchanged?: true }>;
    };
    const suffix = () => crypto.randomUUID().slice(0, 8);

    test('creates, upserts and updates, with every refusal a batch decides in memory', async () => {
      const s = suffix();
      const existing = (await call('POST', '/users', { email: `have-${s}@example.test`, name: 'Have', external_id: `have-${s}`, roles: ['teacher'] })).body;
      const removed = (await call('POST', '/users', { email: `removed-${s}@example.test`, name: 'Removed', external_id: `removed-${s}` })).body;
      assert.equal((await call('DELETE', `/users/${removed.id}`)).status, 204);
      const custom = await call('POST', '/roles', { key: `c_${s}`, name: 'Custom', capabilities: ['course/view'] });
      assert.equal(custom.status, 201);
      const results = await bulk([
        { ref: 'a', op: 'create', data: { email: `a-${s}@example.test`, name: 'A', roles: [`c_${s}`], external_id: `a-${s}` } },
        { ref: 'twin', op: 'create', data: { email: `A-${s}@Example.test`, name: 'A twin' } },
        { ref: 'taken', op: 'create', data: { email: `have-${s}@example.test`, name: 'Taken' } },
        { ref: 'taken-by-removed', op: 'create', data: { email: `removed-${s}@example.test`, name: 'Taken' } },
        { ref: 'ext-taken', op: 'create', external_id: `removed-${s}`, data: { email: `ext-${s}@example.test`, name: 'Ext' } },
        { ref: 'unknown-role', op: 'create', data: { email: `role-${s}@example.test`, name: 'Role', roles: ['nobody_here'] } },
        { ref: 'rename', op: 'update', external_id: `have-${s}`, data: { name: 'Have renamed', email: `have-new-${s}@example.test` } },
        { ref: 'absent', op: 'update', id: crypto.randomUUID(), data: { name: 'Nobody' } },
        { ref: 'gone', op: 'update', id: removed.id, data: { name: 'Too late' } },
        { ref: 'new-upsert', op: 'upsert', external_id: `up-${s}`, data: { email: `up-${s}@example.test`, name: 'Up' } },
        { ref: 'same-upsert', op: 'upsert', external_id: `same-${s}`, data: { email: `same-${s}@example.test`, name: 'Same' } },
      ]);
      const outcome = results.map((r) => [r.ref, r.status, r.error?.code ?? null]);
      assert.deepEqual(outcome, [
        ['a', 201, null],
        ['twin', 409, 'user.email_taken'],
        ['taken', 409, 'user.email_taken'],
        ['taken-by-removed', 409, 'user.email_taken'],
        ['ext-taken', 409, 'resource.external_id_taken'],
        ['unknown-role', 422, 'validation.invalid_body'],
        ['rename', 200, null],
        ['absent', 404, 'user.not_found'],
        ['gone', 409, 'user.deleted'],
        ['new-upsert', 201, null],
        ['same-upsert', 201, null],
      ]);
      assert.match(results[3].error!.detail, /\(removed\)/);
      assert.deepEqual(results[0].data!.roles, [`c_${s}`]);
      for (const r of results.filter((x) => x.status < 300)) assert.deepEqual((await call('GET', `/users/${r.data!.id}`)).body, r.data);
      const events = (await t.database.db.selectFrom('outbox_events').select(['type', 'data']).where('organisation_id', '=', caller.org.id).orderBy('id').execute()).filter((e) => results.some((r) => r.data && e.data.includes(r.data.id)));
      assert.deepEqual(
        events.map((e) => e.data),
        [
          JSON.stringify({ id: existing.id, summary: 'User "Have" added.' }),
          JSON.stringify({ id: results[0].data!.id, summary: 'User "A" added.' }),
          JSON.stringify({ id: existing.id, summary: 'User "Have renamed" changed (name, email).' }),
          JSON.stringify({ id: results[9].data!.id, summary: 'User "Up" added.' }),
          JSON.stringify({ id: results[10].data!.id, summary: 'User "Same" added.' }),
        ],
      );

      // An address given up by one operation and taken by a later one: the batch's INSERT, written before its
      // UPDATE, meets the unique key, and the operations run one by one, in order, as they would have.
      const swap = await bulk([
        { ref: 'give-up', op: 'update', external_id: `have-${s}`, data: { email: `have-newer-${s}@example.test` } },
        { ref: 'take', op: 'create', data: { email: `have-new-${s}@example.test`, name: 'Old address' } },
      ]);
      assert.deepEqual(swap.map((r) => [r.ref, r.status]), [['give-up', 200], ['take', 201]]);
      assert.equal((await call('GET', `/users/${existing.id}`)).body.email, `have-newer-${s}@example.test`);

      // The same request again, the addresses as they now are: all in batch this time.
      const again = await bulk([
        { ref: 'same-upsert', op: 'upsert', external_id: `same-${s}`, data: { email: `same-${s}@example.test`, name: 'Same' } },
        { ref: 'renamed-upsert', op: 'upsert', external_id: `up-${s}`, data: { email: `up-${s}@example.test`, name: 'Up renamed' } },
        { ref: 'second', op: 'create', data: { email: `second-${s}@example.test`, name: 'Second' } },
      ]);
      assert.deepEqual(again.map((r) => [r.ref, r.status, r.unchanged ?? false]), [['same-upsert', 200, true], ['renamed-upsert', 200, false], ['second', 201, false]]);
      assert.equal(again[1].data!.name, 'Up renamed');
    });

    test('what a batch leaves to the one-by-one run: a change of roles or status (the epoch moves), a delete, an external id named twice', async () => {
      const s = suffix();
      const member = await t.make.caller({ org: caller.org, roles: ['teacher'] });
      const person = (await call('GET', `/users/${member.personId}`)).body;
      const before = await epoch();
      const results = await bulk([
        { ref: 'suspend', op: 'update', id: member.personId, data: { status: 'suspended' } },
        { ref: 'new', op: 'create', data: { email: `n-${s}@example.test`, name: 'New', external_id: `n-${s}` } },
      ]);
      assert.deepEqual(results.map((r) => r.status), [200, 201]);
      assert.equal(await epoch(), before + 1);
      assert.equal((await callAs(member, 'GET', '/me')).status, 401);
      assert.deepEqual((await eventsOf(person.id)).map((e) => e.type), ['user.updated']);

      const twice = await bulk([
        { ref: 'one', op: 'create', external_id: `t-${s}`, data: { email: `t1-${s}@example.test`, name: 'One' } },
        { ref: 'two', op: 'upsert', external_id: `t-${s}`, data: { email: `t2-${s}@example.test`, name: 'Two' } },
        { ref: 'bye', op: 'delete', external_id: `n-${s}` },
      ]);
      assert.deepEqual(twice.map((r) => r.status), [201, 200, 204]);
      assert.equal(twice[1].data!.id, twice[0].data!.id);
      assert.equal(twice[1].data!.email, `t2-${s}@example.test`);
    });
  });
});
