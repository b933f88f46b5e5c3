import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, manualClock, type TestContext } from '../../../test/support/harness.ts';
import type { Caller } from '../../../test/support/factories.ts';

describe('sections', () => {
  const clock = manualClock(new Date('2026-11-01T09:00:00.000Z'));
  let t: TestContext;
  let admin: Caller;
  before(async () => {
    t = await startTestApp({ clock });
    admin = await t.make.caller();
  });
  after(() => t.close());

  const as = (c: Caller) => ({ host: c.org.address, key: c.key });
  const readRow = (id: string) => t.database.db.selectFrom('sections').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  describe('PATCH /sections/{id} (operation 10)', () => {
    test('renames and hides a section; fields left out keep their value', async () => {
      const s = await t.make.section(admin.org, { title: 'Week 1', visible: true });
      clock.advance(60_000);
      const renamed = await t.api.request({ ...as(admin), method: 'PATCH', path: `/sections/${s.id}`, body: { title: 'Week 1: Foundations' } });
      assert.equal(renamed.status, 200);
      assert.equal(renamed.body.title, 'Week 1: Foundations');
      assert.equal(renamed.body.visible, true);
      assert.equal(renamed.body.updated_at, '2026-11-01T09:01:00.000Z');
      assert.equal(renamed.body.created_at, s.created_at);

      const hidden = await t.api.request({ ...as(admin), method: 'PATCH', path: `/sections/${s.id}`, body: { visible: false } });
      assert.equal(hidden.status, 200);
      assert.deepEqual({ title: hidden.body.title, visible: hidden.body.visible }, { title: 'Week 1: Foundations', visible: false });
      const row = await readRow(s.id);
      assert.equal(row.title, 'Week 1: Foundations');
      assert.equal(Boolean(row.visible), false);
    });

    test('an empty body changes nothing, not even updated_at', async () => {
      const s = await t.make.section(admin.org);
      clock.advance(1000);
      const res = await t.api.request({ ...as(admin), method: 'PATCH', path: `/sections/${s.id}`, body: {} });
      assert.equal(res.status, 200);
      assert.equal(res.body.updated_at, s.updated_at);
    });

    test('title bounds: 255 characters pass, 256 and empty do not', async () => {
      const s = await t.make.section(admin.org);
      const ok = await t.api.request({ ...as(admin), method: 'PATCH', path: `/sections/${s.id}`, body: { title: 'é'.repeat(255) } });
      assert.equal(ok.status, 200);
      assert.equal(ok.body.title.length, 255);
      for (const title of ['x'.repeat(256), '', '   ']) {
        const res = await t.api.request({ ...as(admin), method: 'PATCH', path: `/sections/${s.id}`, body: { title } });
        assert.equal(res.status, 422, `title of ${title.length}`);
        assert.equal(res.body.code, 'validation.invalid_body');
        assert.deepEqual(res.body.errors.map((e: { path: string }) => e.path), ['/title']);
      }
      assert.equal((await readRow(s.id)).title, 'é'.repeat(255));
    });

    const badBodies: Array<[string, unknown, string[]]> = [
      ['visible as a string', { visible: 'yes' }, ['/visible']],
      ['title as a number', { title: 12 }, ['/title']],
      ['title null', { title: null }, ['/title']],
      ['an unknown field', { title: 'ok', colour: 'red' }, ['/colour']],
      ['several bad fields at once', { title: '', visible: 1, extra: true }, ['/extra', '/title', '/visible']],
      ['an array', [{ title: 'x' }], ['']],
      ['a string', 'title', ['']],
    ];
    for (const [name, body, paths] of badBodies) {
      test(`422 for ${name}, naming the field, and nothing changes`, async () => {
        const s = await t.make.section(admin.org, { title: 'Before' });
        const res = await t.api.request({ ...as(admin), method: 'PATCH', path: `/sections/${s.id}`, body });
        assert.equal(res.status, 422);
        assert.equal(res.body.category, 'validation');
        assert.deepEqual(res.body.errors.map((e: { path: string }) => e.path).sort(), paths);
        const row = await readRow(s.id);
        assert.equal(row.title, 'Before');
        assert.equal(row.updated_at, s.updated_at);
      });
    }

    test('malformed JSON, a non-JSON content type and a missing body are 422s', async () => {
      const s = await t.make.section(admin.org);
      const malformed = await t.api.request({ ...as(admin), method: 'PATCH', path: `/sections/${s.id}`, payload: '{"title":', headers: { 'content-type': 'application/json' } });
      assert.equal(malformed.status, 422);
      assert.equal(malformed.body.code, 'request.malformed_json');
      const text = await t.api.request({ ...as(admin), method: 'PATCH', path: `/sections/${s.id}`, payload: 'title=x', headers: { 'content-type': 'text/plain' } });
      assert.equal(text.status, 422);
      assert.equal(text.body.code, 'request.unsupported_media_type');
      assert.equal(text.body.category, 'validation');
      const none = await t.api.request({ ...as(admin), method: 'PATCH', path: `/sections/${s.id}` });
      assert.equal(none.status, 422);
      assert.equal(none.body.code, 'request.body_required');
    });

    test('404 for an unknown id and for an id that is not a UUID', async () => {
      for (const id of ['01a1ffb1-ef6f-770b-ba7c-b487911c9252', 'not-a-uuid', '01A1FFB1-EF6F-770B-BA7C-B487911C9252x']) {
        const res = await t.api.request({ ...as(admin), method: 'PATCH', path: `/sections/${id}`, body: { title: 'x' } });
        assert.equal(res.status, 404);
        assert.equal(res.body.code, 'section.not_found');
      }
    });

    test('409 when the section has been deleted', async () => {
      const s = await t.make.section(admin.org);
      assert.equal((await t.api.request({ ...as(admin), method: 'DELETE', path: `/sections/${s.id}` })).status, 204);
      const res = await t.api.request({ ...as(admin), method: 'PATCH', path: `/sections/${s.id}`, body: { title: 'Back' } });
      assert.equal(res.status, 409);
      assert.equal(res.body.code, 'section.deleted');
      assert.equal((await readRow(s.id)).title, 'Section');
    });
  });

  describe('supporting operations', () => {
    test('create appends at the end of the course, read returns it', async () => {
      const course = await t.make.course(admin.org);
      const first = await t.api.request({ ...as(admin), method: 'POST', path: '/sections', body: { course_id: course.id, title: 'One', summary: { format: 'markdown', content: '# Hi' } } });
      const second = await t.api.request({ ...as(admin), method: 'POST', path: '/sections', body: { course_id: course.id, title: 'Two', external_id: 'sec-2' } });
      assert.equal(first.status, 201);
      assert.equal(second.status, 201);
      assert.ok(first.body.sort_key < second.body.sort_key);
      assert.deepEqual(first.body.summary, { format: 'markdown', content: '# Hi' });
      const read = await t.api.request({ ...as(admin), path: `/sections/${second.body.id}` });
      assert.deepEqual(read.body, second.body);
    });

    test('create refuses an unknown course (422 at /course_id), a deleted course (409) and a taken external_id (409)', async () => {
      const missing = await t.api.request({ ...as(admin), method: 'POST', path: '/sections', body: { course_id: '01a1ffb1-ef6f-770b-ba7c-b487911c9252' } });
      assert.equal(missing.status, 422);
      assert.equal(missing.body.errors[0].path, '/course_id');
      const course = await t.make.course(admin.org);
      await t.make.section(admin.org, { course_id: course.id, external_id: 'dup' });
      const taken = await t.api.request({ ...as(admin), method: 'POST', path: '/sections', body: { course_id: course.id, external_id: 'dup' } });
      assert.equal(taken.status, 409);
      assert.equal(taken.body.code, 'resource.external_id_taken');
      await t.api.request({ ...as(admin), method: 'DELETE', path: `/courses/${course.id}` });
      const deleted = await t.api.request({ ...as(admin), method: 'POST', path: '/sections', body: { course_id: course.id } });
      assert.equal(deleted.status, 409);
      assert.equal(deleted.body.code, 'course.deleted');
    });

    test('a parent section must be a live section of the same course and organisation (422 at /parent_section_id otherwise)', async () => {
      const course = await t.make.course(admin.org);
      const parent = await t.make.section(admin.org, { course_id: course.id });
      const child = await t.api.request({ ...as(admin), method: 'POST', path: '/sections', body: { course_id: course.id, parent_section_id: parent.id } });
      assert.equal(child.status, 201);
      assert.equal(child.body.parent_section_id, parent.id);
      assert.ok(child.body.sort_key > parent.sort_key);

      const elsewhere = await t.make.section(admin.org);
      const other = await t.make.caller();
      const foreign = await t.make.section(other.org);
      const deleted = await t.make.section(admin.org, { course_id: course.id });
      await t.api.request({ ...as(admin), method: 'DELETE', path: `/sections/${deleted.id}` });
      for (const parentId of [elsewhere.id, foreign.id, deleted.id, '01a1ffb1-ef6f-770b-ba7c-b487911c9252']) {
        const refused = await t.api.request({ ...as(admin), method: 'POST', path: '/sections', body: { course_id: course.id, parent_section_id: parentId } });
        assert.equal(refused.status, 422, parentId);
        assert.equal(refused.body.errors[0].path, '/parent_section_id');
      }
      const sections = await t.database.db.selectFrom('sections').select('id').where('course_id', '=', course.id).execute();
      assert.equal(sections.length, 3);
    });

    test('delete is soft: the section leaves lists unless include_deleted, and stays readable', async () => {
      const c = await t.make.caller();
      const course = await t.make.course(c.org);
      const keep = await t.make.section(c.org, { course_id: course.id });
      const gone = await t.make.section(c.org, { course_id: course.id });
      clock.advance(1000);
      assert.equal((await t.api.request({ ...as(c), method: 'DELETE', path: `/sections/${gone.id}` })).status, 204);
      const listed = await t.api.request({ ...as(c), path: `/sections?course_id=${course.id}` });
      assert.deepEqual(listed.body.data.map((s: { id: string }) => s.id), [keep.id]);
      const all = await t.api.request({ ...as(c), path: `/sections?course_id=${course.id}&include_deleted=true` });
      assert.deepEqual(all.body.data.map((s: { id: string }) => s.id), [keep.id, gone.id]);
      const read = await t.api.request({ ...as(c), path: `/sections/${gone.id}` });
      assert.equal(read.body.deleted_at, clock.now().toISOString());
      const again = await t.api.request({ ...as(c), method: 'DELETE', path: `/sections/${gone.id}` });
      assert.equal(again.status, 409);
    });

    test('lists page with limit and cursor, and refuse a bad limit or cursor', async () => {
      const c = await t.make.caller();
      const course = await t.make.course(c.org);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await t.make.section(c.org, { course_id: course.id })).id);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res: { body: { data: { id: string }[]; page: { next_cursor: string | null; has_more: boolean; limit: number } } } = await t.api.request({
          ...as(c),
          path: `/sections?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        });
        assert.equal(res.body.page.limit, 2);
        seen.push(...res.body.data.map((s) => s.id));
        cursor = res.body.page.next_cursor;
        assert.equal(res.body.page.has_more, cursor !== null);
      } while (cursor);
      assert.deepEqual(seen, ids);
      for (const q of ['limit=0', 'limit=201', 'limit=abc', 'cursor=garbage', 'course_id=nope', 'colour=red']) {
        const res = await t.api.request({ ...as(c), path: `/sections?${q}` });
        assert.equal(res.status, 422, q);
        assert.equal(res.body.code, 'validation.invalid_parameter');
        assert.equal(res.body.errors, undefined);
      }
      const other = await t.make.caller();
      const first = await t.api.request({ ...as(c), path: '/sections?limit=1' });
      const foreign = await t.api.request({ ...as(other), path: `/sections?cursor=${first.body.page.next_cursor}` });
      assert.equal(foreign.status, 422);
      assert.match(foreign.body.detail, /cursor/);
    });
  });
});
