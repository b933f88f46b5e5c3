// A PATCH or DELETE of a section, or the DELETE of a category or an activity, without an Idempotency-Key is, on
// PostgreSQL, one statement sent with its audit entry and COMMIT (src/db/final-statement.ts): the change and its event are made by the database, and a section it could
// not change sends the request down its full path. On SQLite the same request takes that path at once. Both must
// answer, record and refuse alike: this file runs on both and holds them to the same outcomes, byte for byte
// where an event's data is concerned.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestAppWithCaller, type TestContext } from './support/harness.ts';
import type { Caller } from './support/factories.ts';
import { writeTraces } from './support/write-traces.ts';

describe('PATCH and DELETE /sections/{id}: the change, its event and its audit entry, in one statement or on the full path', () => {
  let t: TestContext;
  let caller: Caller;
  before(async () => ({ t, caller } = await startTestAppWithCaller()));
  after(() => t?.close());

  const patch = (id: string, body: unknown) => t.api.request({ host: caller.org.address, key: caller.key, method: 'PATCH', path: `/sections/${id}`, body });
  const { eventsOf, ...traces } = writeTraces(() => ({ t, caller }));
  const successEntries = (id: string) => traces.successEntries(id, ['action', 'status', 'changed_fields']);

  test('a change answers the new section, and its event data is what EventRecorder writes, whatever the title holds', async () => {
    for (const title of ['Plain', 'Quotes " and \\ and\nnew line', 'Ünïcödé ☃ 𝄞 and \u2028', 'x'.repeat(120)]) {
      const section = await t.make.section(caller.org);
      const before = await t.database.db.selectFrom('sections').selectAll().where('id', '=', section.id).executeTakeFirstOrThrow();
      // The clock is real: a PATCH in the section's own millisecond could not move updated_at past it.
      await new Promise((resolve) => setTimeout(resolve, 2));
      const res = await patch(section.id, { title, visible: false });
      assert.equal(res.status, 200);
      assert.equal(res.body.title, title);
      assert.equal(res.body.visible, false);
      assert.equal(res.body.course_id, before.course_id);
      assert.ok(res.body.updated_at > before.updated_at);
      const shown = title.length > 80 ? `${title.slice(0, 77)}...` : title;
      const events = await eventsOf(section.id);
      assert.deepEqual(events.map((e) => e.type), ['section.created', 'section.updated']);
      assert.equal(events[1].data, JSON.stringify({ id: section.id, course_id: before.course_id, summary: `Section titled ${JSON.stringify(shown)} and hidden.` }));
      assert.deepEqual(await successEntries(section.id), [{ action: 'updateSection', status: 200, changed_fields: '["title","visible"]' }]);
      // Read back as answered.
      const read = await t.api.request({ host: caller.org.address, key: caller.key, path: `/sections/${section.id}` });
      assert.deepEqual(read.body, res.body);
    }
  });

  test('a PATCH that changes nothing answers the section as it is, with no event, no new updated_at, one audit entry', async () => {
    const section = await t.make.section(caller.org, { title: 'Same', visible: true });
    const res = await patch(section.id, { title: 'Same', visible: true });
    assert.equal(res.status, 200);
    assert.equal(res.body.updated_at, section.updated_at);
    assert.deepEqual((await eventsOf(section.id)).map((e) => e.type), ['section.created']);
    assert.equal((await successEntries(section.id)).length, 1);
  });

  test('a delete leaves the section readable as deleted, its tombstone, and an event whose summary quotes the title as the service does', async () => {
    // Past 80 characters a title is cut to 77 and `...`; characters, not UTF-16 units (the emoji are two each).
    for (const title of [null, 'Short', '😀'.repeat(79) + 'ab', 'é'.repeat(81), 'Quote " and \\ here']) {
      const section = await t.make.section(caller.org, { title });
      const before = await t.database.db.selectFrom('sections').select(['course_id', 'external_id']).where('id', '=', section.id).executeTakeFirstOrThrow();
      const res = await t.api.request({ host: caller.org.address, key: caller.key, method: 'DELETE', path: `/sections/${section.id}` });
      assert.equal(res.status, 204);
      const chars = title === null ? [] : [...title];
      const quoted = title === null ? '(untitled)' : JSON.stringify(chars.length > 80 ? `${chars.slice(0, 77).join('')}...` : title);
      const events = await eventsOf(section.id);
      assert.deepEqual(events.map((e) => e.type), ['section.created', 'section.deleted']);
      assert.equal(events[1].data, JSON.stringify({ id: section.id, course_id: before.course_id, summary: `Section ${quoted} deleted.` }));
      const read = await t.api.request({ host: caller.org.address, key: caller.key, path: `/sections/${section.id}` });
      assert.equal(read.status, 200);
      assert.ok(read.body.deleted_at);
      const tombstones = await t.database.db.selectFrom('deletions').select(['resource_type', 'external_id']).where('resource_id', '=', section.id).execute();
      assert.deepEqual(tombstones.map((r) => ({ ...r })), [{ resource_type: 'section', external_id: before.external_id }]);
      assert.deepEqual(await successEntries(section.id), [{ action: 'deleteSection', status: 204, changed_fields: '[]' }]);
    }
  });

  test('a category deleted: readable as deleted, its tombstone, its event worded as the service words it; absent 404, deleted 409', async () => {
    for (const name of ['Plain', 'Quotes " and \\ and\ttab', 'Ünïcödé 😀']) {
      const category = await t.make.category(caller.org, { name });
      const path = `/categories/${category.id}`;
      const res = await t.api.request({ host: caller.org.address, key: caller.key, method: 'DELETE', path });
      assert.equal(res.status, 204);
      const events = await t.database.db.selectFrom('outbox_events').select(['type', 'data']).where('data', 'like', `%"id":"${category.id}"%`).orderBy('id').execute();
      assert.deepEqual(events.map((e) => e.type), ['category.created', 'category.deleted']);
      assert.equal(events[1].data, JSON.stringify({ id: category.id, summary: `Category ${JSON.stringify(name)} deleted.` }));
      const tombstones = await t.database.db.selectFrom('deletions').select('resource_type').where('resource_id', '=', category.id).execute();
      assert.deepEqual(tombstones.map((r) => r.resource_type), ['category']);
      assert.deepEqual((await successEntries(category.id)).map((e) => [e.action, e.status]), [['deleteCategory', 204]]);
      const again = await t.api.request({ host: caller.org.address, key: caller.key, method: 'DELETE', path });
      assert.equal(again.status, 409);
    }
    const absent = await t.api.request({ host: caller.org.address, key: caller.key, method: 'DELETE', path: `/categories/${crypto.randomUUID()}` });
    assert.equal(absent.status, 404);
  });

  test('an activity deleted: its event names its course and type, and quotes its name as the service does', async () => {
    for (const name of ['Quiz one', '😀'.repeat(79) + 'ab', 'Tab\tand "quotes"']) {
      const activity = await t.make.activity(caller.org, { name });
      const row = await t.database.db.selectFrom('activities').select(['course_id', 'type']).where('id', '=', activity.id).executeTakeFirstOrThrow();
      const res = await t.api.request({ host: caller.org.address, key: caller.key, method: 'DELETE', path: `/activities/${activity.id}` });
      assert.equal(res.status, 204);
      const chars = [...name];
      const quoted = JSON.stringify(chars.length > 80 ? `${chars.slice(0, 77).join('')}...` : name);
      const events = await t.database.db.selectFrom('outbox_events').select(['type', 'data']).where('type', '=', 'activity.deleted').where('data', 'like', `%"id":"${activity.id}"%`).execute();
      assert.deepEqual(events.map((e) => e.data), [JSON.stringify({ id: activity.id, course_id: row.course_id, type: row.type, summary: `Activity ${row.type} ${quoted} deleted.` })]);
      assert.equal((await t.api.request({ host: caller.org.address, key: caller.key, method: 'DELETE', path: `/activities/${activity.id}` })).status, 409);
    }
  });

  test('an absent section is a 404 and a deleted one a 409, with no event and no success entry', async () => {
    const absent = crypto.randomUUID();
    const missing = await patch(absent, { title: 'Nobody' });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 'section.not_found');
    assert.deepEqual(await successEntries(absent), []);

    const section = await t.make.section(caller.org);
    assert.equal((await t.api.request({ host: caller.org.address, key: caller.key, method: 'DELETE', path: `/sections/${section.id}` })).status, 204);
    const gone = await patch(section.id, { title: 'Too late' });
    assert.equal(gone.status, 409);
    assert.deepEqual((await eventsOf(section.id)).map((e) => e.type), ['section.created', 'section.deleted']);
    assert.deepEqual((await successEntries(section.id)).map((e) => e.action), ['deleteSection']);
  });
});
