import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, manualClock, type TestContext } from '../../../test/support/harness.ts';
import type { Caller } from '../../../test/support/factories.ts';

describe('activities', () => {
  const clock = manualClock(new Date('2026-11-02T08:00:00.000Z'));
  let t: TestContext;
  let admin: Caller;
  before(async () => {
    t = await startTestApp({ clock });
    admin = await t.make.caller();
  });
  after(() => t.close());

  const as = (c: Caller) => ({ host: c.org.address, key: c.key });
  const post = (c: Caller, body: unknown) => t.api.request({ ...as(c), method: 'POST', path: '/activities', body });

  test('create a wiki activity: collaborative unless said otherwise; a lesson takes no settings', async () => {
    const section = await t.make.section(admin.org);
    const wiki = await post(admin, { course_id: section.course_id, section_id: section.id, type: 'wiki', name: 'Glossary', external_id: 'act-glossary' });
    assert.equal(wiki.status, 201);
    assert.deepEqual(wiki.body, {
      id: wiki.body.id,
      external_id: 'act-glossary',
      course_id: section.course_id,
      section_id: section.id,
      type: 'wiki',
      name: 'Glossary',
      settings: { mode: 'collaborative' },
      created_at: clock.now().toISOString(),
      updated_at: clock.now().toISOString(),
      deleted_at: null,
    });
    const individual = await post(admin, { course_id: section.course_id, type: 'wiki', name: 'Journal', settings: { mode: 'individual' } });
    assert.deepEqual(individual.body.settings, { mode: 'individual' });
    assert.deepEqual((await t.api.request({ ...as(admin), path: `/activities/${individual.body.id}` })).body, individual.body);
    const lesson = await post(admin, { course_id: section.course_id, type: 'lesson', name: 'Lesson 1' });
    assert.equal(lesson.status, 201);
    assert.deepEqual(lesson.body.settings, {});
    const wikis = await t.database.db.selectFrom('wikis').selectAll().where('activity_id', 'in', [wiki.body.id, individual.body.id, lesson.body.id]).execute();
    assert.deepEqual(wikis.map((w) => [w.activity_id, w.mode]).sort(), [[wiki.body.id, 'collaborative'], [individual.body.id, 'individual']].sort());
  });

  test('create refuses bad input with a 422 naming the field, and creates nothing', async () => {
    const course = await t.make.course(admin.org);
    const otherSection = await t.make.section(admin.org);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ course_id: course.id, type: 'quiz', name: 'x' }, '/type'],
      [{ course_id: course.id, type: 'wiki', name: '' }, '/name'],
      [{ course_id: course.id, type: 'wiki' }, '/name'],
      [{ course_id: course.id, type: 'wiki', name: 'x', settings: { mode: 'anarchy' } }, '/settings/mode'],
      [{ course_id: course.id, type: 'lesson', name: 'x', settings: { mode: 'group' } }, '/settings/mode'],
      [{ course_id: course.id, type: 'wiki', name: 'x', section_id: otherSection.id }, '/section_id'],
      [{ course_id: '01a1ffb1-ef6f-770b-ba7c-b487911c9252', type: 'wiki', name: 'x' }, '/course_id'],
    ];
    for (const [body, path] of cases) {
      const res = await post(admin, body);
      assert.equal(res.status, 422, JSON.stringify(body));
      assert.deepEqual(res.body.errors.map((e: { path: string }) => e.path), [path]);
    }
    assert.deepEqual((await t.api.request({ ...as(admin), path: `/activities?course_id=${course.id}` })).body.data, []);
  });

  test('409 extension.disabled while the activity type is switched off; existing activities keep working', async () => {
    const c = await t.make.caller();
    const course = await t.make.course(c.org);
    const existing = await t.make.activity(c.org, { course_id: course.id });
    await t.app.services.extensions.setEnabled(t.database.db, c.org.id, 'mod_wiki', false);
    const res = await post(c, { course_id: course.id, type: 'wiki', name: 'Refused' });
    assert.equal(res.status, 409);
    assert.equal(res.body.code, 'extension.disabled');
    assert.equal((await post(c, { course_id: course.id, type: 'lesson', name: 'Still fine' })).status, 201);
    assert.equal((await t.api.request({ ...as(c), path: `/activities?course_id=${course.id}&type=wiki` })).body.data.length, 1);
    const page = await t.api.request({ ...as(c), method: 'POST', path: '/wiki_pages', body: { activity_id: existing.id, title: 'Still editable', body: null } });
    assert.equal(page.status, 201);
    await t.app.services.extensions.setEnabled(t.database.db, c.org.id, 'mod_wiki', true);
    assert.equal((await post(c, { course_id: course.id, type: 'wiki', name: 'Back on' })).status, 201);
  });

  test('409 course.deleted for an activity in a deleted course', async () => {
    const course = await t.make.course(admin.org);
    await t.api.request({ ...as(admin), method: 'DELETE', path: `/courses/${course.id}` });
    const res = await post(admin, { course_id: course.id, type: 'wiki', name: 'x' });
    assert.equal(res.status, 409);
    assert.equal(res.body.code, 'course.deleted');
  });

  test('PATCH renames and moves between sections of its course; a change that changes nothing keeps updated_at', async () => {
    const section = await t.make.section(admin.org);
    const next = await t.make.section(admin.org, { course_id: section.course_id });
    const a = await t.make.activity(admin.org, { course_id: section.course_id });
    clock.advance(1000);
    const res = await t.api.request({ ...as(admin), method: 'PATCH', path: `/activities/${a.id}`, body: { name: 'Renamed', section_id: next.id } });
    assert.equal(res.status, 200);
    assert.deepEqual([res.body.name, res.body.section_id, res.body.updated_at, res.body.settings], ['Renamed', next.id, clock.now().toISOString(), { mode: 'collaborative' }]);
    clock.advance(1000);
    const same = await t.api.request({ ...as(admin), method: 'PATCH', path: `/activities/${a.id}`, body: { name: 'Renamed' } });
    assert.equal(same.body.updated_at, res.body.updated_at);
    const out = await t.api.request({ ...as(admin), method: 'PATCH', path: `/activities/${a.id}`, body: { section_id: null } });
    assert.equal(out.body.section_id, null);
    const foreign = await t.api.request({ ...as(admin), method: 'PATCH', path: `/activities/${a.id}`, body: { section_id: (await t.make.section(admin.org)).id } });
    assert.equal(foreign.status, 422);
    assert.equal(foreign.body.errors[0].path, '/section_id');
    const settings = await t.api.request({ ...as(admin), method: 'PATCH', path: `/activities/${a.id}`, body: { settings: { mode: 'group' } } });
    assert.equal(settings.status, 422, 'settings are fixed once the activity exists');
  });

  test('PUT ext: creates, then updates; type, course and settings cannot change', async () => {
    const course = await t.make.course(admin.org);
    const put = (body: Record<string, unknown>) => t.api.request({ ...as(admin), method: 'PUT', path: '/activities/ext:sis-wiki', body: { course_id: course.id, type: 'wiki', name: 'SIS wiki', ...body } });
    assert.equal((await put({ settings: { mode: 'group' } })).status, 201);
    const renamed = await put({ name: 'SIS wiki (renamed)', settings: { mode: 'group' } });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.name, 'SIS wiki (renamed)');
    for (const [body, path] of [[{ type: 'lesson' }, '/type'], [{ settings: { mode: 'individual' } }, '/settings/mode'], [{ course_id: (await t.make.course(admin.org)).id }, '/course_id']] as const) {
      const res = await put(body);
      assert.equal(res.status, 422, path);
      assert.equal(res.body.errors[0].path, path);
    }
  });

  test('delete is soft: readable with deleted_at, gone from lists, tombstoned; deleting again is a 409', async () => {
    const c = await t.make.caller();
    const a = await t.make.activity(c.org);
    const page = await t.make.wikiPage(c.org, { activity_id: a.id });
    clock.advance(1000);
    assert.equal((await t.api.request({ ...as(c), method: 'DELETE', path: `/activities/${a.id}` })).status, 204);
    const read = await t.api.request({ ...as(c), path: `/activities/${a.id}` });
    assert.equal(read.body.deleted_at, clock.now().toISOString());
    assert.deepEqual((await t.api.request({ ...as(c), path: '/activities' })).body.data, []);
    assert.equal((await t.api.request({ ...as(c), path: '/activities?include_deleted=true' })).body.data.length, 1);
    assert.deepEqual((await t.api.request({ ...as(c), path: '/activities/deletions' })).body.data.map((d: { id: string }) => d.id), [a.id]);
    for (const [method, body] of [['DELETE', undefined], ['PATCH', { name: 'Back' }]] as const) {
      const res = await t.api.request({ ...as(c), method, path: `/activities/${a.id}`, body });
      assert.equal(res.status, 409);
      assert.equal(res.body.code, 'activity.deleted');
    }
    const edit = await t.api.request({ ...as(c), method: 'PATCH', path: `/wiki_pages/${page.id}`, body: { body: 'late edit' } });
    assert.equal(edit.status, 409);
    assert.equal(edit.body.code, 'activity.deleted');
  });

  test('404 for an unknown activity and for one of another organisation', async () => {
    const other = await t.make.caller();
    const theirs = await t.make.activity(other.org);
    for (const id of ['01a1ffb1-ef6f-770b-ba7c-b487911c9252', 'nope', theirs.id]) {
      const res = await t.api.request({ ...as(admin), path: `/activities/${id}` });
      assert.equal(res.status, 404);
      assert.equal(res.body.code, 'activity.not_found');
    }
    const page = await t.api.request({ ...as(admin), method: 'POST', path: '/wiki_pages', body: { activity_id: theirs.id, title: 'x', body: null } });
    assert.equal(page.status, 422, "another organisation's activity is no activity here");
  });
});
