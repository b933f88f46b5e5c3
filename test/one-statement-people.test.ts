// The PATCHes and DELETEs of courses, categories, users and roles without an Idempotency-Key are, on PostgreSQL,
// one statement sent with their audit entry and COMMIT (src/db/final-statement.ts); refused there, or on SQLite,
// the request takes its full path. Both must answer, record and refuse alike: this file runs on both engines and
// holds them to the same outcomes, byte for byte where an event's data is concerned.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestContext } from './support/harness.ts';
import type { Caller } from './support/factories.ts';

describe('PATCH and DELETE of courses, categories, users and roles: in one statement or on the full path, alike', () => {
  let t: TestContext;
  let caller: Caller;
  before(async () => {
    t = await startTestApp();
    caller = await t.make.caller();
  });
  after(() => t?.close());

  const call = (method: string, path: string, body?: unknown) => t.api.request({ host: caller.org.address, key: caller.key, method, path, ...(body === undefined ? {} : { body }) });
  const eventsOf = async (id: string) =>
    (await t.database.db.selectFrom('outbox_events').select(['type', 'data']).where('organisation_id', '=', caller.org.id).where('data', 'like', `%"id":"${id}"%`).orderBy('id').execute()).map((e) => ({ ...e }));
  const successEntries = async (id: string) =>
    (await t.database.db.selectFrom('audit_events').select(['action', 'status', 'changed_fields']).where('target_id', '=', id).where('outcome', '=', 'success').orderBy('id').execute()).map((e) => ({ ...e }));
  const tombstonesOf = async (id: string) => (await t.database.db.selectFrom('deletions').select(['resource_type', 'external_id']).where('resource_id', '=', id).execute()).map((r) => ({ ...r }));
  const epoch = async () => Number((await t.database.db.selectFrom('organisations').select('credentials_epoch').where('id', '=', caller.org.id).executeTakeFirstOrThrow()).credentials_epoch);
  const names = ['Plain', 'Quotes " and \\ and\nnew line', 'Ünïcödé ☃ 𝄞 and \u2028', 'x'.repeat(120)];

  describe('PATCH /courses/{id}', () => {
    test('a change answers the course as changed; its event names the short name before the change and the fields changed, in the patch order', async () => {
      for (const shortname of names) {
        const category = await t.make.category(caller.org);
        const course = await t.make.course(caller.org, { shortname });
        const res = await call('PATCH', `/courses/${course.id}`, { visible: false, fullname: 'Renamed', shortname: 'NEW', category_id: category.id });
        assert.equal(res.status, 200);
        assert.deepEqual({ ...res.body, updated_at: undefined }, { ...course, visible: false, fullname: 'Renamed', shortname: 'NEW', category_id: category.id, updated_at: undefined });
        assert.ok(res.body.updated_at > course.updated_at);
        const events = await eventsOf(course.id);
        assert.deepEqual(events.map((e) => e.type), ['course.created', 'course.updated']);
        assert.equal(events[1].data, JSON.stringify({ id: course.id, summary: `Course ${JSON.stringify(shortname)} changed: visible, fullname, shortname, category_id.` }));
        assert.deepEqual(await successEntries(course.id), [{ action: 'updateCourse', status: 200, changed_fields: '["visible","fullname","shortname","category_id"]' }]);
        assert.deepEqual((await call('GET', `/courses/${course.id}`)).body, res.body);
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
      const res = await call('PATCH', `/courses/${course.id}`, { fullname: 'Same', visible: true });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, course);
      assert.deepEqual((await eventsOf(course.id)).map((e) => e.type), ['course.created']);
      assert.equal((await successEntries(course.id)).length, 1);
    });

    test('absent 404, deleted 409, a category absent or deleted 422, each with no event and no change', async () => {
      const absent = await call('PATCH', `/courses/${crypto.randomUUID()}`, { fullname: 'Nobody' });
      assert.deepEqual([absent.status, absent.body.code], [404, 'course.not_found']);

      const deleted = await t.make.course(caller.org);
      assert.equal((await call('DELETE', `/courses/${deleted.id}`)).status, 204);
      const gone = await call('PATCH', `/courses/${deleted.id}`, { fullname: 'Too late' });
      assert.deepEqual([gone.status, gone.body.code], [409, 'course.deleted']);

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
        const res = await call('PATCH', `/categories/${category.id}`, { parent_id: parent.id, name: 'Renamed' });
        assert.equal(res.status, 200);
        assert.deepEqual({ ...res.body, updated_at: undefined }, { ...category, parent_id: parent.id, name: 'Renamed', updated_at: undefined });
        assert.ok(res.body.updated_at > category.updated_at);
        const events = await eventsOf(category.id);
        assert.deepEqual(events.map((e) => e.type), ['category.created', 'category.updated']);
        assert.equal(events[1].data, JSON.stringify({ id: category.id, summary: `Category ${JSON.stringify(name)} changed: parent_id, name.` }));
        assert.deepEqual(await successEntries(category.id), [{ action: 'updateCategory', status: 200, changed_fields: '["parent_id","name"]' }]);
        assert.deepEqual((await call('GET', `/categories/${category.id}`)).body, res.body);
      }
    });

    test('a PATCH that changes nothing: no event, no new updated_at', async () => {
      const category = await t.make.category(caller.org, { name: 'Same' });
      const res = await call('PATCH', `/categories/${category.id}`, { name: 'Same', parent_id: null });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, category);
      assert.deepEqual((await eventsOf(category.id)).map((e) => e.type), ['category.created']);
    });

    test('absent 404, deleted 409, its own parent 422, a parent absent or deleted 422', async () => {
      const absent = await call('PATCH', `/categories/${crypto.randomUUID()}`, { name: 'Nobody' });
      assert.deepEqual([absent.status, absent.body.code], [404, 'category.not_found']);
      const deleted = await t.make.category(caller.org);
      assert.equal((await call('DELETE', `/categories/${deleted.id}`)).status, 204);
      const gone = await call('PATCH', `/categories/${deleted.id}`, { name: 'Too late' });
      assert.deepEqual([gone.status, gone.body.code], [409, 'category.deleted']);

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
});
