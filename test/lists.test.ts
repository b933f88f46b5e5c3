// Lists and sync, shown on sections (every list shares the one implementation in src/operations/listing.ts):
// cursor paging under concurrent change, changes since, deletions, external ids, and bad parameters.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, manualClock, type TestContext } from './support/harness.ts';
import type { Caller } from './support/factories.ts';
import { spareBitsVariant } from './support/base64url.ts';

describe('lists and sync', () => {
  const clock = manualClock(new Date('2026-11-04T12:00:00.000Z'));
  let t: TestContext;
  let c: Caller;
  before(async () => {
    t = await startTestApp({ clock });
    c = await t.make.caller();
  });
  after(() => t.close());

  const get = (path: string, caller: Caller = c) => t.api.request({ host: caller.org.address, key: caller.key, path });

  test('paging through 1,000 rows misses and repeats none while rows are inserted and deleted between pages', async () => {
    const course = await t.make.course(c.org);
    const original: string[] = [];
    await t.database.db.transaction().execute(async (tx) => {
      for (let i = 0; i < 1000; i++) original.push((await t.app.services.sections.create(tx, c.org.id, { course_id: course.id, title: `S${i}` })).id);
    });
    const deleted = new Set<string>();
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await get(`/sections?course_id=${course.id}&limit=97${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      assert.equal(res.status, 200);
      seen.push(...res.body.data.map((s: { id: string }) => s.id));
      cursor = res.body.page.next_cursor;
      pages++;
      // Between pages: one new row, and one not-yet-seen original row deleted.
      await t.make.section(c.org, { course_id: course.id });
      const victim = original.find((id) => !seen.includes(id) && !deleted.has(id));
      if (victim) {
        await t.api.request({ host: c.org.address, key: c.key, method: 'DELETE', path: `/sections/${victim}` });
        deleted.add(victim);
      }
    } while (cursor);
    assert.ok(pages >= 10);
    assert.equal(new Set(seen).size, seen.length, 'no row repeated');
    for (const id of original) if (!deleted.has(id)) assert.ok(seen.includes(id), `row ${id} missed`);
    for (const id of deleted) assert.ok(!seen.includes(id), 'a row deleted before its page is not listed');
  });

  test('updated_since returns changes after a time in order of change; include_deleted adds deleted rows', async () => {
    const o = await t.make.caller();
    const course = await t.make.course(o.org);
    const a = await t.make.section(o.org, { course_id: course.id, title: 'A' });
    const b = await t.make.section(o.org, { course_id: course.id, title: 'B' });
    clock.advance(60_000);
    const since = clock.now().toISOString();
    clock.advance(1000);
    await t.api.request({ host: o.org.address, key: o.key, method: 'PATCH', path: `/sections/${b.id}`, body: { title: 'B2' } });
    clock.advance(1000);
    await t.api.request({ host: o.org.address, key: o.key, method: 'PATCH', path: `/sections/${a.id}`, body: { title: 'A2' } });
    clock.advance(1000);
    const c3 = await t.make.section(o.org, { course_id: course.id, title: 'C' });
    clock.advance(1000);
    await t.api.request({ host: o.org.address, key: o.key, method: 'DELETE', path: `/sections/${c3.id}` });

    const changed = await get(`/sections?updated_since=${encodeURIComponent(since)}`, o);
    assert.deepEqual(changed.body.data.map((s: { title: string }) => s.title), ['B2', 'A2']);
    const withDeleted = await get(`/sections?updated_since=${encodeURIComponent(since)}&include_deleted=true&limit=2`, o);
    assert.deepEqual(withDeleted.body.data.map((s: { title: string }) => s.title), ['B2', 'A2']);
    const next = await get(`/sections?updated_since=${encodeURIComponent(since)}&include_deleted=true&limit=2&cursor=${encodeURIComponent(withDeleted.body.page.next_cursor)}`, o);
    assert.deepEqual(next.body.data.map((s: { title: string; deleted_at: string | null }) => [s.title, s.deleted_at !== null]), [['C', true]]);
    // An offset form of the same instant means the same thing.
    const offset = new Date(Date.parse(since) + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    assert.equal((await get(`/sections?updated_since=${encodeURIComponent(offset)}`, o)).body.data.length, 2);

    const tombstones = await get(`/sections/deletions?since=${encodeURIComponent(since)}`, o);
    assert.deepEqual(tombstones.body.data, [{ id: c3.id, external_id: c3.external_id, deleted_at: clock.now().toISOString() }]);
    assert.deepEqual((await get(`/sections/deletions?since=${encodeURIComponent(clock.now().toISOString())}`, o)).body.data, []);
  });

  test('tombstones deleted at the same instant page one by one, in tombstone order, none missed', async () => {
    const o = await t.make.caller();
    const sections = [await t.make.section(o.org), await t.make.section(o.org), await t.make.section(o.org)];
    // Deleted newest first at one instant: the tombstones' order is the reverse of the sections' ids.
    for (const s of [...sections].reverse()) {
      assert.equal((await t.api.request({ host: o.org.address, key: o.key, method: 'DELETE', path: `/sections/${s.id}` })).status, 204);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await get(`/sections/deletions?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, o);
      assert.equal(res.status, 200);
      seen.push(...res.body.data.map((d: { id: string }) => d.id));
      cursor = res.body.page.next_cursor;
    } while (cursor);
    assert.deepEqual(seen, sections.map((s) => s.id).reverse());
  });

  test('a forged, truncated or foreign cursor, and bad list parameters, are 422s naming the parameter; nothing is listed', async () => {
    const first = await get('/sections?limit=1');
    const cursor: string = first.body.page.next_cursor;
    const [data, sig] = cursor.split('.');
    const payload = JSON.parse(Buffer.from(data, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...payload, k: ['00000000-0000-0000-0000-000000000000'] })).toString('base64url') + '.' + sig;
    const other = await t.make.caller();
    const otherCursor = (await t.make.section(other.org), await t.make.section(other.org), (await get('/sections?limit=1', other)).body.page.next_cursor);
    const coursesCursor = (await get('/courses?limit=1')).body.page.next_cursor;
    const cases: Array<[string, string, Caller?]> = [
      ['forged', `/sections?limit=1&cursor=${encodeURIComponent(forged)}`],
      ['truncated', `/sections?limit=1&cursor=${encodeURIComponent(cursor.slice(0, -3))}`],
      ['unsigned', `/sections?limit=1&cursor=${data}`],
      ['signature with a stray character', `/sections?limit=1&cursor=${encodeURIComponent(`${data}.${sig.slice(0, 5)}!${sig.slice(5)}`)}`],
      ['signature differing in spare bits', `/sections?limit=1&cursor=${encodeURIComponent(`${data}.${spareBitsVariant(sig)}`)}`],
      ['another organisation', `/sections?limit=1&cursor=${encodeURIComponent(otherCursor)}`],
      ['another list', `/sections?limit=1&cursor=${encodeURIComponent(coursesCursor)}`],
      ['other filters', `/sections?limit=1&include_deleted=true&cursor=${encodeURIComponent(cursor)}`],
    ];
    for (const [name, path] of cases) {
      const res = await get(path);
      assert.equal(res.status, 422, name);
      assert.equal(res.body.code, 'validation.invalid_parameter');
      assert.match(res.body.detail, /`cursor`/, name);
    }
    for (const [q, param] of [['limit=0', 'limit'], ['limit=201', 'limit'], ['limit=abc', 'limit'], ['updated_since=yesterday', 'updated_since'], ['include_deleted=maybe', 'include_deleted']]) {
      const res = await get(`/sections?${q}`);
      assert.equal(res.status, 422, q);
      assert.match(res.body.detail, new RegExp(`\`${param}\``));
      assert.equal(res.body.errors, undefined);
    }
    assert.equal((await get('/sections/deletions?since=yesterday')).status, 422);
  });

  describe('external ids', () => {
    test('PUT /sections/ext:{external_id} creates (201), then updates (200); GET reads by it', async () => {
      const course = await t.make.course(c.org);
      const put = (body: unknown) => t.api.request({ host: c.org.address, key: c.key, method: 'PUT', path: '/sections/ext:sis-week-1', body });
      const created = await put({ course_id: course.id, title: 'Week 1' });
      assert.equal(created.status, 201);
      assert.equal(created.body.external_id, 'sis-week-1');
      const updated = await put({ course_id: course.id, title: 'Week 1 (revised)', visible: false });
      assert.equal(updated.status, 200);
      assert.equal(updated.body.id, created.body.id);
      assert.equal(updated.body.title, 'Week 1 (revised)');
      const read = await get('/sections/ext:sis-week-1');
      assert.deepEqual(read.body, updated.body);
      const moved = await put({ course_id: (await t.make.course(c.org)).id, title: 'x' });
      assert.equal(moved.status, 422);
      assert.equal(moved.body.errors[0].path, '/course_id');
    });

    test('unique per organisation: another organisation may use the same external id', async () => {
      const other = await t.make.caller();
      const mine = await t.make.section(c.org, { external_id: 'shared-ext' });
      const theirs = await t.make.section(other.org, { external_id: 'shared-ext' });
      assert.notEqual(mine.id, theirs.id);
      assert.equal((await get('/sections/ext:shared-ext')).body.id, mine.id);
      assert.equal((await get('/sections/ext:shared-ext', other)).body.id, theirs.id);
    });

    test('bounds: 255 characters work, 256 are a 422 on PUT and not found on GET; unknown is a 404', async () => {
      const course = await t.make.course(c.org);
      const long = 'e'.repeat(255);
      assert.equal((await t.api.request({ host: c.org.address, key: c.key, method: 'PUT', path: `/courses/ext:${long}`, body: { fullname: 'C', shortname: 'C' } })).status, 201);
      const tooLong = await t.api.request({ host: c.org.address, key: c.key, method: 'PUT', path: `/sections/ext:${'e'.repeat(256)}`, body: { course_id: course.id } });
      assert.equal(tooLong.status, 422);
      assert.match(tooLong.body.detail, /`external_id`/);
      assert.equal((await get(`/sections/ext:${'e'.repeat(256)}`)).status, 404);
      const unknown = await get('/sections/ext:nobody');
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.code, 'section.not_found');
    });
  });
});
