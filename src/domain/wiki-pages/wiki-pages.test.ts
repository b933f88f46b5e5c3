import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, manualClock, type TestContext } from '../../../test/support/harness.ts';
import type { Caller } from '../../../test/support/factories.ts';
import { MAX_SAFE } from '../../operations/schemas.ts';
import { demoSteps, type SeedContext } from '../../cli/seed-demo.ts';
import { wikiPagesRepository } from './wiki-pages.repository.ts';

const UNKNOWN = '01a1ffb1-ef6f-770b-ba7c-b487911c9252';

describe('wiki pages', () => {
  const clock = manualClock(new Date('2026-11-02T10:00:00.000Z'));
  let t: TestContext;
  let admin: Caller;
  before(async () => {
    t = await startTestApp({ clock });
    admin = await t.make.caller();
  });
  after(() => t.close());

  const as = (c: Caller) => ({ host: c.org.address, key: c.key });
  const pageRow = (id: string) => t.database.db.selectFrom('wiki_pages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const versionRows = (id: string) => t.database.db.selectFrom('wiki_page_versions').selectAll().where('wiki_page_id', '=', id).orderBy('version').execute();
  const eventsOf = (c: Caller, id: string) =>
    t.database.db.selectFrom('outbox_events').selectAll().where('organisation_id', '=', c.org.id).orderBy('id').execute().then((rows) => rows.filter((e) => JSON.parse(e.data).id === id));

  /** A collaborative wiki page of `c`'s organisation with three versions: (Alpha, a), (Beta, b), (Beta, c). */
  async function pageWithHistory(c: Caller = admin) {
    const activity = await t.make.activity(c.org);
    const created = await t.api.request({ ...as(c), method: 'POST', path: '/wiki_pages', body: { activity_id: activity.id, title: `Alpha ${Math.random()}`, body: { text: 'a' } } });
    assert.equal(created.status, 201);
    const id = created.body.id;
    clock.advance(1000);
    assert.equal((await t.api.request({ ...as(c), method: 'PATCH', path: `/wiki_pages/${id}`, body: { title: 'Beta', body: { text: 'b' } } })).status, 200);
    clock.advance(1000);
    const third = await t.api.request({ ...as(c), method: 'PATCH', path: `/wiki_pages/${id}`, body: { body: { text: 'c' } } });
    assert.equal(third.body.version, 3);
    clock.advance(1000);
    return { activity, page: third.body, v1Title: created.body.title };
  }

  describe('POST /wiki_pages/{id}/actions/restore (operation 4)', () => {
    test('200: restoring version N makes a new version equal to N, and the earlier versions stay as they were', async () => {
      const { page, v1Title } = await pageWithHistory();
      const before = await versionRows(page.id);
      const restorer = await t.make.caller({ org: admin.org, roles: ['teacher'], platformAdmin: false });
      const res = await t.api.request({ ...as(restorer), method: 'POST', path: `/wiki_pages/${page.id}/actions/restore`, body: { version: 1 } });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { ...page, title: v1Title, body: { text: 'a' }, version: 4, updated_by: restorer.personId, updated_at: clock.now().toISOString() });

      const after = await versionRows(page.id);
      assert.deepEqual(after.slice(0, 3), before, 'versions 1 to 3 are unchanged');
      assert.equal(after.length, 4);
      assert.deepEqual({ title: after[3].title, body: after[3].body }, { title: before[0].title, body: before[0].body });
      assert.equal(after[3].restored_from, 1);
      assert.equal(after[3].created_by, restorer.personId);

      const listed = await t.api.request({ ...as(admin), path: `/wiki_pages/${page.id}/versions` });
      assert.deepEqual(listed.body.data.map((v: { version: number; restored_from: number | null }) => [v.version, v.restored_from]), [[1, null], [2, null], [3, null], [4, 1]]);
      assert.deepEqual(listed.body.data[3].body, listed.body.data[0].body);
      assert.deepEqual((await t.api.request({ ...as(admin), path: `/wiki_pages/${page.id}` })).body, res.body);

      const events = await eventsOf(admin, page.id);
      assert.equal(events.at(-1)!.type, 'wiki_page.restored');
      const data = JSON.parse(events.at(-1)!.data);
      assert.deepEqual({ ...data, summary: undefined }, { id: page.id, activity_id: page.activity_id, course_id: page.course_id, wiki_id: page.wiki_id, subwiki_id: page.subwiki_id, summary: undefined });
      assert.match(data.summary, /version 1 restored as version 4/);
    });

    test('200: restoring an intermediate version, then a later one, each time as a new version', async () => {
      const { page } = await pageWithHistory();
      const two = await t.api.request({ ...as(admin), method: 'POST', path: `/wiki_pages/${page.id}/actions/restore`, body: { version: 2 } });
      assert.deepEqual([two.body.version, two.body.title, two.body.body], [4, 'Beta', { text: 'b' }]);
      const three = await t.api.request({ ...as(admin), method: 'POST', path: `/wiki_pages/${page.id}/actions/restore`, body: { version: 3 } });
      assert.deepEqual([three.body.version, three.body.title, three.body.body], [5, 'Beta', { text: 'c' }]);
      const four = await t.api.request({ ...as(admin), path: `/wiki_pages/${page.id}/versions/4` });
      assert.deepEqual([four.body.version, four.body.restored_from, four.body.body], [4, 2, { text: 'b' }]);
    });

    test('200 without a new version when the page already has that content: the current version, or a retry of a restore', async () => {
      const { page } = await pageWithHistory();
      const current = await t.api.request({ ...as(admin), method: 'POST', path: `/wiki_pages/${page.id}/actions/restore`, body: { version: 3 } });
      assert.equal(current.status, 200);
      assert.deepEqual(current.body, page);
      assert.equal((await versionRows(page.id)).length, 3);

      const first = await t.api.request({ ...as(admin), method: 'POST', path: `/wiki_pages/${page.id}/actions/restore`, body: { version: 1 } });
      assert.equal(first.body.version, 4);
      const eventsBefore = (await eventsOf(admin, page.id)).length;
      clock.advance(5000);
      const retry = await t.api.request({ ...as(admin), method: 'POST', path: `/wiki_pages/${page.id}/actions/restore`, body: { version: 1 } });
      assert.equal(retry.status, 200);
      assert.deepEqual(retry.body, first.body, 'same version, same updated_at');
      assert.equal((await versionRows(page.id)).length, 4);
      assert.equal((await eventsOf(admin, page.id)).length, eventsBefore, 'no event for a change that changes nothing');
    });

    test('200 with Idempotency-Key: a replay returns the recorded page and makes no further version', async () => {
      const { page } = await pageWithHistory();
      const send = () => t.api.request({ ...as(admin), method: 'POST', path: `/wiki_pages/${page.id}/actions/restore`, body: { version: 2 }, headers: { 'idempotency-key': `restore-${page.id}` } });
      const first = await send();
      const replay = await send();
      assert.equal(replay.raw, first.raw);
      assert.equal(replay.headers['idempotency-replayed'], 'true');
      assert.equal((await versionRows(page.id)).length, 4);
    });

    test('404 for an unknown page, an id that is not a UUID, and a page of another organisation', async () => {
      const other = await t.make.caller();
      const { page } = await pageWithHistory(other);
      for (const id of [UNKNOWN, 'not-a-uuid', page.id]) {
        const res = await t.api.request({ ...as(admin), method: 'POST', path: `/wiki_pages/${id}/actions/restore`, body: { version: 1 } });
        assert.equal(res.status, 404, id);
        assert.equal(res.body.code, 'wiki_page.not_found');
      }
      assert.equal((await pageRow(page.id)).version, 3, "the other organisation's page is untouched");
    });

    test('409 wiki_page.deleted for a deleted page, and nothing changes', async () => {
      const { page } = await pageWithHistory();
      assert.equal((await t.api.request({ ...as(admin), method: 'DELETE', path: `/wiki_pages/${page.id}` })).status, 204);
      const res = await t.api.request({ ...as(admin), method: 'POST', path: `/wiki_pages/${page.id}/actions/restore`, body: { version: 1 } });
      assert.equal(res.status, 409);
      assert.equal(res.body.code, 'wiki_page.deleted');
      assert.equal(res.body.category, 'conflict');
      assert.equal((await versionRows(page.id)).length, 3);
    });

    test('409 activity.deleted when the page’s wiki activity has been deleted', async () => {
      const { activity, page } = await pageWithHistory();
      assert.equal((await t.api.request({ ...as(admin), method: 'DELETE', path: `/activities/${activity.id}` })).status, 204);
      const res = await t.api.request({ ...as(admin), method: 'POST', path: `/wiki_pages/${page.id}/actions/restore`, body: { version: 1 } });
      assert.equal(res.status, 409);
      assert.equal(res.body.code, 'activity.deleted');
      assert.equal((await t.api.request({ ...as(admin), path: `/wiki_pages/${page.id}` })).status, 200, 'the page stays readable');
    });

    test('409 wiki_page.title_taken when another live page of the subwiki now has the old title', async () => {
      const { activity, page, v1Title } = await pageWithHistory();
      const squatter = await t.api.request({ ...as(admin), method: 'POST', path: '/wiki_pages', body: { activity_id: activity.id, title: v1Title, body: null } });
      assert.equal(squatter.status, 201);
      const res = await t.api.request({ ...as(admin), method: 'POST', path: `/wiki_pages/${page.id}/actions/restore`, body: { version: 1 } });
      assert.equal(res.status, 409);
      assert.equal(res.body.code, 'wiki_page.title_taken');
      assert.equal((await versionRows(page.id)).length, 3);
      // Version 2 has the same title as the current one, so it can be restored.
      assert.equal((await t.api.request({ ...as(admin), method: 'POST', path: `/wiki_pages/${page.id}/actions/restore`, body: { version: 2 } })).status, 200);
    });

    test('409 wiki_page.edit_conflict when the page changed between reading it and writing the new version', async () => {
      const { page } = await pageWithHistory();
      const original = wikiPagesRepository.findWithActivityLive;
      // Another request moved the page on after this one read it: the read returns the version before.
      wikiPagesRepository.findWithActivityLive = async (...args) => {
        const row = await original(...args);
        return row && { ...row, version: row.version - 1 };
      };
      let res;
      try {
        res = await t.api.request({ ...as(admin), method: 'POST', path: `/wiki_pages/${page.id}/actions/restore`, body: { version: 1 } });
      } finally {
        wikiPagesRepository.findWithActivityLive = original;
      }
      assert.equal(res.status, 409);
      assert.equal(res.body.code, 'wiki_page.edit_conflict');
      assert.equal((await versionRows(page.id)).length, 3);
      assert.equal((await pageRow(page.id)).version, 3);
    });

    const badBodies: Array<[string, unknown, string]> = [
      ['no version', {}, '/version'],
      ['version 0', { version: 0 }, '/version'],
      ['a negative version', { version: -1 }, '/version'],
      ['a fractional version', { version: 1.5 }, '/version'],
      ['version as a string', { version: '1' }, '/version'],
      ['version null', { version: null }, '/version'],
      ['version above 9007199254740991', { version: MAX_SAFE + 1 }, '/version'],
      ['an unknown field', { version: 1, comment: 'oops' }, '/comment'],
      ['an array', [{ version: 1 }], ''],
    ];
    for (const [name, body, path] of badBodies) {
      test(`422 for ${name}, naming the field, and nothing changes`, async () => {
        const { page } = await pageWithHistory();
        const res = await t.api.request({ ...as(admin), method: 'POST', path: `/wiki_pages/${page.id}/actions/restore`, body });
        assert.equal(res.status, 422);
        assert.equal(res.body.code, 'validation.invalid_body');
        assert.deepEqual(res.body.errors.map((e: { path: string }) => e.path), [path]);
        assert.equal((await versionRows(page.id)).length, 3);
      });
    }

    test('422 at /version for a version the page never had, up to the largest allowed number; nothing changes', async () => {
      const { page } = await pageWithHistory();
      for (const version of [4, 1000, 2 ** 31, MAX_SAFE]) {
        const res = await t.api.request({ ...as(admin), method: 'POST', path: `/wiki_pages/${page.id}/actions/restore`, body: { version } });
        assert.equal(res.status, 422, String(version));
        assert.deepEqual(res.body.errors, [{ path: '/version', code: 'not_found', detail: res.body.errors[0].detail }]);
        assert.match(res.body.detail, /versions 1 to 3/);
      }
      assert.equal((await versionRows(page.id)).length, 3);
    });

    test('422 for a missing body', async () => {
      const { page } = await pageWithHistory();
      const res = await t.api.request({ ...as(admin), method: 'POST', path: `/wiki_pages/${page.id}/actions/restore` });
      assert.equal(res.status, 422);
      assert.equal(res.body.code, 'request.body_required');
    });

    test('403 for a person who may edit but not revert (the integration role)', async () => {
      const { page } = await pageWithHistory();
      const editor = await t.make.caller({ org: admin.org, roles: ['integration'], platformAdmin: false });
      assert.equal((await t.api.request({ ...as(editor), method: 'PATCH', path: `/wiki_pages/${page.id}`, body: { body: 'edited' } })).status, 200);
      const res = await t.api.request({ ...as(editor), method: 'POST', path: `/wiki_pages/${page.id}/actions/restore`, body: { version: 1 } });
      assert.equal(res.status, 403);
      assert.match(res.body.detail, /wiki\/revert/);
    });
  });

  describe('version history', () => {
    test('every change of title or body makes a new version; a change that changes nothing makes none', async () => {
      const activity = await t.make.activity(admin.org);
      const created = await t.api.request({ ...as(admin), method: 'POST', path: '/wiki_pages', body: { activity_id: activity.id, title: 'History', body: 'plain text', external_id: 'hist-1' } });
      assert.equal(created.status, 201);
      assert.deepEqual(Object.keys(created.body).sort(), [
        'activity_id', 'body', 'course_id', 'created_at', 'external_id', 'id', 'subwiki_group_id', 'subwiki_id', 'subwiki_user_id', 'title', 'updated_at', 'updated_by', 'version', 'wiki_id',
      ]);
      assert.equal(created.body.version, 1);
      assert.equal(created.body.updated_by, admin.personId);
      assert.equal(created.body.course_id, activity.course_id);
      const id = created.body.id;
      const patch = (body: unknown) => t.api.request({ ...as(admin), method: 'PATCH', path: `/wiki_pages/${id}`, body });
      const bodies: unknown[] = ['plain text', 42, [1, 'two', { three: 3 }], null, { nested: { deep: [true, false] } }];
      for (const [i, body] of bodies.slice(1).entries()) {
        const res = await patch({ body });
        assert.equal(res.status, 200);
        assert.equal(res.body.version, i + 2);
        assert.deepEqual(res.body.body, body);
      }
      assert.equal((await patch({ title: 'History (renamed)' })).body.version, 6);
      const same = await patch({ title: 'History (renamed)', body: bodies.at(-1) });
      assert.equal(same.body.version, 6, 'the same title and body make no version');
      assert.equal((await patch({})).body.version, 6);

      const versions = await t.api.request({ ...as(admin), path: `/wiki_pages/${id}/versions` });
      assert.deepEqual(versions.body.data.map((v: { body: unknown }) => v.body), [...bodies, bodies.at(-1)]);
      assert.deepEqual(versions.body.data.map((v: { title: string }) => v.title), [...bodies.map(() => 'History'), 'History (renamed)']);
      for (const v of versions.body.data) {
        assert.equal(v.wiki_page_id, id);
        assert.equal(v.created_by, admin.personId);
        assert.deepEqual((await t.api.request({ ...as(admin), path: `/wiki_pages/${id}/versions/${v.version}` })).body, v);
      }
    });

    test('versions page with limit and cursor, oldest first', async () => {
      const page = await t.make.wikiPage(admin.org, { edits: 4 });
      const seen: number[] = [];
      let cursor: string | null = null;
      do {
        const res: { body: { data: { version: number }[]; page: { next_cursor: string | null } } } = await t.api.request({
          ...as(admin),
          path: `/wiki_pages/${page.id}/versions?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        });
        seen.push(...res.body.data.map((v) => v.version));
        cursor = res.body.page.next_cursor;
      } while (cursor);
      assert.deepEqual(seen, [1, 2, 3, 4, 5]);
      // A cursor of one page's versions is not one of another's.
      const other = await t.make.wikiPage(admin.org, { edits: 2 });
      const first = await t.api.request({ ...as(admin), path: `/wiki_pages/${page.id}/versions?limit=1` });
      const foreign = await t.api.request({ ...as(admin), path: `/wiki_pages/${other.id}/versions?limit=1&cursor=${encodeURIComponent(first.body.page.next_cursor)}` });
      assert.equal(foreign.status, 422);
    });

    test('a version the page never had is a 404 wiki_page.version_not_found', async () => {
      const page = await t.make.wikiPage(admin.org, { edits: 1 });
      for (const v of ['3', String(2 ** 31), String(MAX_SAFE)]) {
        const res = await t.api.request({ ...as(admin), path: `/wiki_pages/${page.id}/versions/${v}` });
        assert.equal(res.status, 404, v);
        assert.equal(res.body.code, 'wiki_page.version_not_found');
      }
      for (const v of ['0', 'abc', '1.5', String(MAX_SAFE + 10)]) {
        const res = await t.api.request({ ...as(admin), path: `/wiki_pages/${page.id}/versions/${v}` });
        assert.equal(res.status, 404, v);
      }
    });

    test('versions are tenant data: another organisation sees none of them, even with the right ids', async () => {
      const page = await t.make.wikiPage(admin.org, { edits: 2 });
      const other = await t.make.caller();
      for (const path of [`/wiki_pages/${page.id}`, `/wiki_pages/${page.id}/versions`, `/wiki_pages/${page.id}/versions/1`]) {
        const res = await t.api.request({ ...as(other), path });
        assert.equal(res.status, 404, path);
        assert.equal(res.body.code, 'wiki_page.not_found');
      }
      assert.equal((await t.api.request({ ...as(other), method: 'PATCH', path: `/wiki_pages/${page.id}`, body: { body: 'x' } })).status, 404);
      assert.equal((await t.api.request({ ...as(other), path: `/wiki_pages/ext:${page.external_id}` })).status, 404);
      const listed = await t.api.request({ ...as(other), path: '/wiki_pages?limit=200' });
      assert.ok(listed.body.data.every((p: { id: string }) => p.id !== page.id));
      const rows = await versionRows(page.id);
      assert.equal(rows.length, 3);
      assert.ok(rows.every((r) => r.organisation_id === admin.org.id));
    });
  });

  describe('supporting operations', () => {
    test('create: 422 for an unknown activity, a non-wiki activity, a missing body or a blank title; 409 for a deleted activity', async () => {
      const lesson = await t.make.activity(admin.org, { type: 'lesson' });
      const wiki = await t.make.activity(admin.org);
      const cases: Array<[unknown, string, string]> = [
        [{ activity_id: UNKNOWN, title: 'x', body: null }, '/activity_id', 'not_found'],
        [{ activity_id: lesson.id, title: 'x', body: null }, '/activity_id', 'wrong_type'],
        [{ activity_id: wiki.id, title: 'x' }, '/body', 'required'],
        [{ activity_id: wiki.id, title: '  ', body: null }, '/title', 'invalid_format'],
        [{ activity_id: wiki.id, title: 'x'.repeat(256), body: null }, '/title', 'too_long'],
      ];
      for (const [body, path, code] of cases) {
        const res = await t.api.request({ ...as(admin), method: 'POST', path: '/wiki_pages', body });
        assert.equal(res.status, 422, JSON.stringify(body));
        assert.deepEqual(res.body.errors.map((e: { path: string; code: string }) => [e.path, e.code]), [[path, code]]);
      }
      await t.api.request({ ...as(admin), method: 'DELETE', path: `/activities/${wiki.id}` });
      const deleted = await t.api.request({ ...as(admin), method: 'POST', path: '/wiki_pages', body: { activity_id: wiki.id, title: 'x', body: null } });
      assert.equal(deleted.status, 409);
      assert.equal(deleted.body.code, 'activity.deleted');
      const rows = await t.database.db.selectFrom('wiki_pages').select('id').where('activity_id', 'in', [wiki.id, lesson.id]).execute();
      assert.equal(rows.length, 0);
    });

    test('titles are unique among the live pages of a subwiki; a deleted page frees its title', async () => {
      const wiki = await t.make.activity(admin.org);
      const create = () => t.api.request({ ...as(admin), method: 'POST', path: '/wiki_pages', body: { activity_id: wiki.id, title: 'Glossary', body: null } });
      const first = await create();
      assert.equal(first.status, 201);
      const clash = await create();
      assert.equal(clash.status, 409);
      assert.equal(clash.body.code, 'wiki_page.title_taken');
      const second = await t.api.request({ ...as(admin), method: 'POST', path: '/wiki_pages', body: { activity_id: wiki.id, title: 'Index', body: null } });
      const rename = await t.api.request({ ...as(admin), method: 'PATCH', path: `/wiki_pages/${second.body.id}`, body: { title: 'Glossary' } });
      assert.equal(rename.status, 409);
      assert.equal(rename.body.code, 'wiki_page.title_taken');
      assert.equal((await t.api.request({ ...as(admin), method: 'DELETE', path: `/wiki_pages/${first.body.id}` })).status, 204);
      assert.equal((await create()).status, 201);
      const elsewhere = await t.make.activity(admin.org);
      assert.equal((await t.api.request({ ...as(admin), method: 'POST', path: '/wiki_pages', body: { activity_id: elsewhere.id, title: 'Glossary', body: null } })).status, 201);
    });

    test('two requests racing for one title: the database index refuses the second with the same 409', async () => {
      const wiki = await t.make.activity(admin.org);
      const taken = await t.api.request({ ...as(admin), method: 'POST', path: '/wiki_pages', body: { activity_id: wiki.id, title: 'Raced', body: null, external_id: `race-${Math.random()}` } });
      const other = await t.api.request({ ...as(admin), method: 'POST', path: '/wiki_pages', body: { activity_id: wiki.id, title: 'Other', body: null } });
      const original = wikiPagesRepository.findLiveByTitle;
      // Both checked before either wrote: the check finds nothing, so only the unique index stands in the way.
      wikiPagesRepository.findLiveByTitle = async () => undefined;
      try {
        for (const [method, path, body] of [
          ['POST', '/wiki_pages', { activity_id: wiki.id, title: 'Raced', body: null, external_id: 'race-new' }],
          ['PATCH', `/wiki_pages/${other.body.id}`, { title: 'Raced' }],
        ] as const) {
          const res = await t.api.request({ ...as(admin), method, path, body });
          assert.equal(res.status, 409, method);
          assert.equal(res.body.code, 'wiki_page.title_taken', method);
        }
      } finally {
        wikiPagesRepository.findLiveByTitle = original;
      }
      assert.equal((await pageRow(taken.body.id)).title, 'Raced');
      assert.equal((await pageRow(other.body.id)).title, 'Other');
    });

    test('subwikis follow the wiki mode: common, per person (the caller’s own by default), per group', async () => {
      const collaborative = await t.make.activity(admin.org);
      const individual = await t.make.activity(admin.org, { settings: { mode: 'individual' } });
      const group = await t.make.activity(admin.org, { settings: { mode: 'group' } });
      const student = await t.make.person(admin.org, { roles: [] });
      const post = (body: Record<string, unknown>) => t.api.request({ ...as(admin), method: 'POST', path: '/wiki_pages', body: { title: `P ${Math.random()}`, body: null, ...body } });

      const common = [await post({ activity_id: collaborative.id }), await post({ activity_id: collaborative.id })];
      assert.equal(common[0].body.subwiki_id, common[1].body.subwiki_id);
      assert.deepEqual([common[0].body.subwiki_user_id, common[0].body.subwiki_group_id], [null, null]);

      const mine = await post({ activity_id: individual.id });
      const theirs = await post({ activity_id: individual.id, subwiki_user_id: student.id });
      const theirsAgain = await post({ activity_id: individual.id, subwiki_user_id: student.id });
      assert.equal(mine.body.subwiki_user_id, admin.personId);
      assert.equal(theirs.body.subwiki_user_id, student.id);
      assert.notEqual(mine.body.subwiki_id, theirs.body.subwiki_id);
      assert.equal(theirs.body.subwiki_id, theirsAgain.body.subwiki_id);
      const sameTitle = await t.api.request({ ...as(admin), method: 'POST', path: '/wiki_pages', body: { activity_id: individual.id, title: mine.body.title, body: null, subwiki_user_id: student.id } });
      assert.equal(sameTitle.status, 201, 'titles are unique per subwiki only');

      const groupId = '0193a5b2-7c1d-7000-8000-0000000000aa';
      const g = await post({ activity_id: group.id, subwiki_group_id: groupId });
      assert.deepEqual([g.body.subwiki_group_id, g.body.subwiki_user_id], [groupId, null]);
      const listed = await t.api.request({ ...as(admin), path: `/wiki_pages?subwiki_id=${theirs.body.subwiki_id}` });
      assert.deepEqual(listed.body.data.map((p: { id: string }) => p.id), [theirs.body.id, theirsAgain.body.id, sameTitle.body.id]);

      const refused: Array<[Record<string, unknown>, string, string]> = [
        [{ activity_id: collaborative.id, subwiki_user_id: student.id }, '/subwiki_user_id', 'not_applicable'],
        [{ activity_id: collaborative.id, subwiki_group_id: groupId }, '/subwiki_group_id', 'not_applicable'],
        [{ activity_id: individual.id, subwiki_user_id: UNKNOWN }, '/subwiki_user_id', 'not_found'],
        [{ activity_id: individual.id, subwiki_group_id: groupId }, '/subwiki_group_id', 'not_applicable'],
        [{ activity_id: group.id }, '/subwiki_group_id', 'required'],
        [{ activity_id: group.id, subwiki_group_id: groupId, subwiki_user_id: student.id }, '/subwiki_user_id', 'not_applicable'],
      ];
      for (const [body, path, code] of refused) {
        const res = await post(body);
        assert.equal(res.status, 422, JSON.stringify(body));
        assert.deepEqual([res.body.errors[0].path, res.body.errors[0].code], [path, code]);
      }
      const otherOrgPerson = await t.make.caller();
      const foreign = await post({ activity_id: individual.id, subwiki_user_id: otherOrgPerson.personId });
      assert.equal(foreign.status, 422, 'a person of another organisation is no person here');
    });

    test('first pages of one subwiki at once, with and without an Idempotency-Key, all go into the one subwiki', async () => {
      const wiki = await t.make.activity(admin.org, { settings: { mode: 'individual' } });
      const created = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          t.api.request({ ...as(admin), method: 'POST', path: '/wiki_pages', body: { activity_id: wiki.id, title: `First ${i}`, body: null }, ...(i % 2 ? { headers: { 'idempotency-key': `first-${crypto.randomUUID()}` } } : {}) }),
        ),
      );
      assert.deepEqual(created.map((res) => res.status), [201, 201, 201, 201, 201, 201]);
      assert.equal(new Set(created.map((res) => res.body.subwiki_id)).size, 1);
      const subwikis = await t.database.db.selectFrom('subwikis').select(['id', 'owner_key', 'user_id']).where('wiki_id', '=', created[0].body.wiki_id).execute();
      assert.deepEqual(subwikis.map((row) => ({ ...row })), [{ id: created[0].body.subwiki_id, owner_key: `user:${admin.personId}`, user_id: admin.personId }]);
    });

    test('delete: the page leaves reads and lists, is listed as deleted, and cannot change again', async () => {
      const c = await t.make.caller();
      const page = await t.make.wikiPage(c.org, { edits: 1 });
      clock.advance(1000);
      assert.equal((await t.api.request({ ...as(c), method: 'DELETE', path: `/wiki_pages/${page.id}` })).status, 204);
      for (const path of [`/wiki_pages/${page.id}`, `/wiki_pages/${page.id}/versions`, `/wiki_pages/ext:${page.external_id}`]) {
        assert.equal((await t.api.request({ ...as(c), path })).status, 404, path);
      }
      assert.deepEqual((await t.api.request({ ...as(c), path: '/wiki_pages' })).body.data, []);
      const tombstones = await t.api.request({ ...as(c), path: '/wiki_pages/deletions' });
      assert.deepEqual(tombstones.body.data, [{ id: page.id, external_id: page.external_id, deleted_at: clock.now().toISOString() }]);
      for (const [method, body] of [['DELETE', undefined], ['PATCH', { title: 'Back' }]] as const) {
        const res = await t.api.request({ ...as(c), method, path: `/wiki_pages/${page.id}`, body });
        assert.equal(res.status, 409);
        assert.equal(res.body.code, 'wiki_page.deleted');
      }
      const upsert = await t.api.request({ ...as(c), method: 'PUT', path: `/wiki_pages/ext:${page.external_id}`, body: { activity_id: page.activity_id, title: 'Back', body: null } });
      assert.equal(upsert.status, 409);
      assert.equal((await versionRows(page.id)).length, 2, 'the versions are kept');
    });

    test('PUT ext: creates (201), then edits as a new version (200); the activity is fixed', async () => {
      const wiki = await t.make.activity(admin.org);
      const put = (body: Record<string, unknown>) => t.api.request({ ...as(admin), method: 'PUT', path: '/wiki_pages/ext:sis-page-1', body: { activity_id: wiki.id, title: 'Synced', ...body } });
      const created = await put({ body: 'one' });
      assert.equal(created.status, 201);
      assert.equal(created.body.external_id, 'sis-page-1');
      const updated = await put({ body: 'two' });
      assert.equal(updated.status, 200);
      assert.equal(updated.body.version, 2);
      assert.equal((await put({ body: 'two' })).body.version, 2);
      const moved = await t.api.request({ ...as(admin), method: 'PUT', path: '/wiki_pages/ext:sis-page-1', body: { activity_id: (await t.make.activity(admin.org)).id, title: 'Synced', body: 'two' } });
      assert.equal(moved.status, 422);
      assert.equal(moved.body.errors[0].path, '/activity_id');
      const taken = await t.api.request({ ...as(admin), method: 'POST', path: '/wiki_pages', body: { activity_id: wiki.id, title: 'Other', body: null, external_id: 'sis-page-1' } });
      assert.equal(taken.status, 409);
      assert.equal(taken.body.code, 'resource.external_id_taken');
    });

    test('lists filter by activity and course, and follow changes since a time', async () => {
      const c = await t.make.caller();
      const a = await t.make.activity(c.org);
      const b = await t.make.activity(c.org);
      const p1 = await t.make.wikiPage(c.org, { activity_id: a.id });
      const p2 = await t.make.wikiPage(c.org, { activity_id: b.id });
      const ids = async (q: string) => (await t.api.request({ ...as(c), path: `/wiki_pages?${q}` })).body.data.map((p: { id: string }) => p.id);
      assert.deepEqual(await ids(`activity_id=${a.id}`), [p1.id]);
      assert.deepEqual(await ids(`course_id=${b.course_id}`), [p2.id]);
      const mark = clock.now().toISOString();
      clock.advance(1000);
      await t.api.request({ ...as(c), method: 'PATCH', path: `/wiki_pages/${p1.id}`, body: { body: 'changed' } });
      assert.deepEqual(await ids(`updated_since=${encodeURIComponent(mark)}`), [p1.id]);
      const res = await t.api.request({ ...as(c), path: '/wiki_pages?include_deleted=true' });
      assert.equal(res.status, 422, 'deleted pages are read from /wiki_pages/deletions');
    });
  });

  test('atrium seed demo: wiki activities with pages that have several versions, one of them restored', async () => {
    const c = await t.make.caller();
    await t.database.db.transaction().execute(async (trx) => {
      const seed: SeedContext = { db: trx, services: t.app.services, organisationId: c.org.id, created: {} };
      for (const step of demoSteps) seed.created[step.collection] = await step.run(seed);
    });
    const activities = await t.api.request({ ...as(c), path: '/activities?type=wiki' });
    assert.ok(activities.body.data.length >= 1);
    const pages = await t.api.request({ ...as(c), path: '/wiki_pages?limit=200' });
    assert.ok(pages.body.data.length >= 2);
    assert.ok(pages.body.data.every((p: { version: number }) => p.version >= 2), 'every demo page has history');
    const restored = pages.body.data.find((p: { external_id: string }) => p.external_id === 'demo-wiki-bio101-mitosis');
    const versions = await t.api.request({ ...as(c), path: `/wiki_pages/${restored.id}/versions` });
    assert.equal(versions.body.data.at(-1).restored_from, 1);
    assert.deepEqual(versions.body.data.at(-1).body, versions.body.data[0].body);
    assert.ok(pages.body.data.every((p: { updated_by: string }) => p.updated_by === c.personId), 'authored by the first person');
  });

  test('atrium seed demo: an organisation without a person has no author for the pages, and is left as it was', async () => {
    const o = await t.make.org();
    const run = t.database.db.transaction().execute(async (trx) => {
      const seed: SeedContext = { db: trx, services: t.app.services, organisationId: o.id, created: {} };
      for (const step of demoSteps) seed.created[step.collection] = await step.run(seed);
    });
    await assert.rejects(run, (err: Error & { code?: string }) => err.code === 'user.not_found' && /create a person first/.test(err.message));
    const courses = await t.database.db.selectFrom('courses').select('id').where('organisation_id', '=', o.id).execute();
    assert.equal(courses.length, 0);
  });
});
