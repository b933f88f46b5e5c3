// The creates of lesson pages, email messages, activities and files without an Idempotency-Key are, on PostgreSQL,
// one statement sent with the audit entry and COMMIT (src/db/final-statement.ts, insertInOneStatement): the row
// and its event made by the database where every premise holds and no unique key is taken; every refusal (422,
// 409) sends the request down its full path, which reads what the create names. On SQLite the same request takes
// that path at once. This file runs on both and holds them to the same answers, rows, events byte for byte and
// audit entries, and every refusal to its status and code, with nothing left behind.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { sql } from 'kysely';
import path from 'node:path';
import { generateKeyBetween } from 'fractional-indexing';
import { quotedForSummary } from '../src/events/summary-text.ts';
import { dialectUnderTest, startTestAppWithCaller, type TestContext } from './support/harness.ts';
import type { Caller } from './support/factories.ts';
import { createChecks } from './support/create-checks.ts';

describe('POST of lesson pages, email messages, activities and files: in one statement or on the full path, alike', () => {
  let t: TestContext;
  /** An administrator of the organisation every test works in (of the app `t` starts). */
  let caller: Caller;
  before(async () => ({ t, caller } = await startTestAppWithCaller()));
  after(() => t?.close());

  const { call, created, refused } = createChecks(() => ({ t, caller }));
  const switched = (extension: string, enabled: boolean) => t.app.services.extensions.setEnabled(t.database.db, caller.org.id, extension, enabled);
  const names = ['Plain', 'Quotes " and \\ and\nnew line', 'Ünïcödé ☃ 𝄞 and \u2028', 'x'.repeat(120)];

  describe('POST /lesson_pages', () => {
    const post = (body: Record<string, unknown>) => refused.bind(null, 'lesson_pages', 'lesson_pages', body);
    const added = (body: Record<string, unknown>, lesson: { id: string; course_id: string }) =>
      created('lesson_pages', 'lesson_pages', body, { type: 'lesson_page.created', data: () => ({ lesson_id: lesson.id, course_id: lesson.course_id, summary: `Lesson page ${quotedForSummary(body.title as string)} added.` }) });

    test('each appended after the lesson\'s last sort key, as generateKeyBetween makes it; its type, contents and answers as asked', async () => {
      const lesson = await t.make.lesson(caller.org);
      const first = await added({ lesson_id: lesson.id, title: 'First' }, lesson);
      assert.deepEqual([first.body.sort_key, first.body.page_type, first.body.contents, first.body.answers, first.body.course_id, first.body.external_id], ['a0', 'content', null, [], lesson.course_id, null]);
      let last = first.body.sort_key as string;
      for (const title of names) {
        const body = {
          lesson_id: lesson.id,
          title,
          page_type: 'multichoice',
          contents: { format: 'html', content: '<p>"Which?"</p>' },
          answers: [{ text: 'Yes', response: 'Right', score: 1, jump_to: first.body.id }, { text: 'No' }],
          external_id: `lp-${crypto.randomUUID()}`,
        };
        const res = await added(body, lesson);
        assert.equal(res.body.sort_key, generateKeyBetween(last, null));
        assert.deepEqual(res.body.answers, [{ text: 'Yes', response: 'Right', score: 1, jump_to: first.body.id }, { text: 'No', response: null, score: 0, jump_to: 'next_page' }]);
        assert.deepEqual(res.body.contents, body.contents);
        last = res.body.sort_key;
      }
      // A deleted page's key is never given again.
      const lastPage = await t.database.db.selectFrom('lesson_pages').select('id').where('sort_key', '=', last).where('lesson_id', '=', lesson.id).executeTakeFirstOrThrow();
      assert.equal((await call('DELETE', `/lesson_pages/${lastPage.id}`)).status, 204);
      assert.equal((await added({ lesson_id: lesson.id, title: 'After' }, lesson)).body.sort_key, generateKeyBetween(last, null));
      // Placed after a page: between it and the next (the full path).
      const between = await added({ lesson_id: lesson.id, title: 'Between', after_page_id: first.body.id }, lesson);
      assert.equal(between.body.sort_key, generateKeyBetween(first.body.sort_key, generateKeyBetween(first.body.sort_key, null)));
    });

    test('placed first, after a page, after the last, and after a deleted neighbour\'s place: between its neighbours as generateKeyBetween makes it', async () => {
      const lesson = await t.make.lesson(caller.org);
      const keysInOrder = async () => (await t.database.db.selectFrom('lesson_pages').select(['id', 'sort_key']).where('lesson_id', '=', lesson.id).orderBy('sort_key').orderBy('id').execute());
      const a = await added({ lesson_id: lesson.id, title: 'A' }, lesson);
      const b = await added({ lesson_id: lesson.id, title: 'B' }, lesson);
      const gone = await added({ lesson_id: lesson.id, title: 'Gone', after_page_id: a.body.id }, lesson);
      assert.equal(gone.body.sort_key, generateKeyBetween(a.body.sort_key, b.body.sort_key));
      assert.equal((await call('DELETE', `/lesson_pages/${gone.body.id}`)).status, 204);
      // A deleted page keeps its key: the next page after A goes between A and it.
      const afterA = await added({ lesson_id: lesson.id, title: 'After A', after_page_id: a.body.id }, lesson);
      assert.equal(afterA.body.sort_key, generateKeyBetween(a.body.sort_key, gone.body.sort_key));
      let first = a.body.sort_key as string;
      for (let i = 0; i < 3; i++) {
        const placed = await added({ lesson_id: lesson.id, title: `First ${i}`, after_page_id: null }, lesson);
        assert.equal(placed.body.sort_key, generateKeyBetween(null, first));
        first = placed.body.sort_key;
      }
      const last = await added({ lesson_id: lesson.id, title: 'After B', after_page_id: b.body.id }, lesson);
      assert.equal(last.body.sort_key, generateKeyBetween(b.body.sort_key, null));
      const order = (await keysInOrder()).map((r) => r.id);
      assert.deepEqual(order.slice(-5), [a.body.id, afterA.body.id, gone.body.id, b.body.id, last.body.id]);
    });

    test('PostgreSQL: atrium_key_between(a, b) is generateKeyBetween(a, b), for every kind of pair', { skip: dialectUnderTest !== 'postgres' && 'PostgreSQL only' }, async () => {
      const keys = new Set<string>();
      // Integers of every length, the smallest and greatest of each, keys with fractions, long fractions.
      for (let key = generateKeyBetween(null, null), i = 0; i < 3000; i++, key = generateKeyBetween(key, null)) if (i % 11 === 0 || /z$/.test(key)) keys.add(key);
      for (let key = 'a0', i = 0; i < 300; i++, key = generateKeyBetween(null, key)) if (i % 5 === 0 || /0$|1$/.test(key)) keys.add(key);
      let narrow = 'a1';
      for (let i = 0; i < 40; i++) keys.add((narrow = generateKeyBetween('a0', narrow)));
      for (const key of ['a0V', 'azzV', 'Zz', 'Yzz', 'b00', 'bzz', 'czzz', 'Az'.padEnd(27, 'z'), 'A'.padEnd(27, '0') + '1', 'A'.padEnd(27, '0') + '0V', `z${'z'.repeat(26)}`, `z${'z'.repeat(26)}V`, 'a0zzzy', 'a1001']) keys.add(key);
      const sorted = [...keys].sort();
      const pairs: Array<[string | null, string | null]> = [[null, null]];
      sorted.forEach((key, i) => {
        pairs.push([null, key], [key, null]);
        if (i + 1 < sorted.length) pairs.push([key, sorted[i + 1]], [sorted[i + 1], key]);
        if (i + 7 < sorted.length) pairs.push([key, sorted[i + 7]]);
      });
      const expected = pairs.flatMap(([a, b]) => {
        try {
          return [{ a, b, key: generateKeyBetween(a, b) }];
        } catch {
          return []; // no key there (before the smallest integer): the library refuses, and so does the function
        }
      });
      assert.ok(expected.length > 1000);
      const { rows } = await sql<{ key: string }>`select atrium_key_between(p.a, p.b) as key from unnest(${expected.map((e) => e.a)}::text[], ${expected.map((e) => e.b)}::text[]) with ordinality as p(a, b, n) order by p.n`.execute(t.database.db);
      assert.equal(rows.length, expected.length);
      rows.forEach(({ key }, i) => assert.equal(key, expected[i].key, `between ${expected[i].a} and ${expected[i].b}`));
    });

    test('every refusal as before, leaving nothing', async () => {
      const lesson = await t.make.lesson(caller.org);
      const page = await added({ lesson_id: lesson.id, title: 'Page', external_id: `lp-${crypto.randomUUID()}` }, lesson);
      const other = await t.make.lessonPage(caller.org);
      const gone = await added({ lesson_id: lesson.id, title: 'Gone' }, lesson);
      assert.equal((await call('DELETE', `/lesson_pages/${gone.body.id}`)).status, 204);
      await post({ lesson_id: crypto.randomUUID(), title: 'X' })(422, 'validation.invalid_body', '/lesson_id');
      const wiki = await t.make.activity(caller.org);
      await post({ lesson_id: wiki.id, title: 'X' })(422, 'validation.invalid_body', '/lesson_id');
      await post({ lesson_id: lesson.id, title: 'X', external_id: page.body.external_id })(409, 'resource.external_id_taken');
      await post({ lesson_id: lesson.id, title: 'X', page_type: 'truefalse', answers: [{ text: 'True' }] })(422, 'validation.invalid_body', '/answers');
      for (const jump of [crypto.randomUUID(), gone.body.id, other.id, 'not a page']) {
        await post({ lesson_id: lesson.id, title: 'X', answers: [{ text: 'Go', jump_to: jump }] })(422, 'validation.invalid_body', '/answers/0/jump_to');
      }
      await post({ lesson_id: lesson.id, title: 'X', after_page_id: gone.body.id })(422, 'validation.invalid_body', '/after_page_id');
      await switched('qtype_truefalse', false);
      try {
        await post({ lesson_id: lesson.id, title: 'X', page_type: 'truefalse', answers: [{ text: 'True' }, { text: 'False' }] })(409, 'extension.disabled');
        // The switch is checked before the answers, the lesson before the switch.
        await post({ lesson_id: lesson.id, title: 'X', page_type: 'truefalse', answers: [] })(409, 'extension.disabled');
        await post({ lesson_id: crypto.randomUUID(), title: 'X', page_type: 'truefalse', answers: [] })(422, 'validation.invalid_body', '/lesson_id');
      } finally {
        await switched('qtype_truefalse', true);
      }
      assert.equal((await call('DELETE', `/activities/${lesson.id}`)).status, 204);
      await post({ lesson_id: lesson.id, title: 'X' })(409, 'activity.deleted');
      // The lesson is checked before the answers.
      await post({ lesson_id: lesson.id, title: 'X', page_type: 'truefalse', answers: [] })(409, 'activity.deleted');
      await post({ lesson_id: lesson.id, title: 'X', answers: [{ text: 'Go', jump_to: crypto.randomUUID() }] })(409, 'activity.deleted');
    });
  });
  describe('POST /email_messages', () => {
    const post = (body: Record<string, unknown>) => refused.bind(null, 'email_messages', 'email_messages', body);
    const made = (body: Record<string, unknown>, how: string) =>
      created('email_messages', 'email_messages', body, { type: 'email_message.created', data: () => ({ summary: `Email message ${quotedForSummary(body.subject as string)} created${how}.` }) });
    const people = async (n: number) => Promise.all(Array.from({ length: n }, async () => (await t.make.person(caller.org, { roles: [] })).id));
    const text = { format: 'html', content: '<p>"Hello" ☃</p>' };

    test('a draft or a scheduled message to people or a course, its send_at stored in UTC; the event says which', async () => {
      const course = await t.make.course(caller.org);
      const later = new Date(Date.now() + 86_400_000);
      const offset = `${later.toISOString().slice(0, 19)}+02:00`;
      for (const subject of names) {
        const draft = await made({ subject, body: text, audience: { type: 'people', person_ids: await people(3) } }, ' as a draft');
        assert.deepEqual([draft.body.status, draft.body.send_at, draft.body.recipient_counts, draft.body.created_by, draft.body.body], ['draft', null, null, caller.personId, text]);
        const sendAt = new Date(Date.parse(offset)).toISOString();
        const audience = { type: 'course', course_id: course.id, roles: ['student', 'teacher'] };
        const scheduled = await made({ subject, body: { format: 'plain', content: 'x' }, audience, send_at: offset, status: 'scheduled', external_id: `em-${crypto.randomUUID()}` }, `, scheduled for ${sendAt}`);
        assert.deepEqual([scheduled.body.status, scheduled.body.send_at, scheduled.body.audience], ['scheduled', sendAt, audience]);
        // A draft may carry a send_at.
        const draftAt = await made({ subject, body: text, audience: { type: 'course', course_id: course.id }, send_at: later.toISOString() }, ' as a draft');
        assert.equal(draftAt.body.send_at, later.toISOString());
      }
    });

    test('every refusal as before, leaving nothing', async () => {
      const course = await t.make.course(caller.org);
      const [someone] = await people(1);
      const message = { subject: 'S', body: text };
      const taken = await made({ ...message, audience: { type: 'people', person_ids: [someone] }, external_id: `em-${crypto.randomUUID()}` }, ' as a draft');
      const elsewhere = (await t.make.person(await t.make.org(), { roles: [] })).id;
      await post({ ...message, audience: { type: 'people', person_ids: [someone, crypto.randomUUID()] } })(422, 'validation.invalid_body', '/audience/person_ids/1');
      await post({ ...message, audience: { type: 'people', person_ids: [elsewhere, someone] } })(422, 'validation.invalid_body', '/audience/person_ids/0');
      await post({ ...message, audience: { type: 'course', course_id: crypto.randomUUID() } })(422, 'validation.invalid_body', '/audience/course_id');
      await post({ ...message, audience: { type: 'people', person_ids: [someone] }, external_id: taken.body.external_id })(409, 'resource.external_id_taken');
      await post({ ...message, audience: { type: 'people', person_ids: [someone] }, status: 'cancelled' })(422, 'validation.invalid_body', '/status');
      await post({ ...message, audience: { type: 'people', person_ids: [someone] }, status: 'scheduled' })(422, 'validation.invalid_body', '/send_at');
      await post({ ...message, audience: { type: 'people', person_ids: [someone] }, status: 'scheduled', send_at: '2001-01-01T00:00:00Z' })(422, 'validation.invalid_body', '/send_at');
      await post({ ...message, audience: { type: 'people', person_ids: [someone], course_id: course.id } })(422, 'validation.invalid_body', '/audience/course_id');
      assert.equal((await call('DELETE', `/courses/${course.id}`)).status, 204);
      await post({ ...message, audience: { type: 'course', course_id: course.id } })(409, 'course.deleted');
      // The schedule is checked before the audience.
      await post({ ...message, audience: { type: 'course', course_id: course.id }, status: 'scheduled' })(422, 'validation.invalid_body', '/send_at');
    });
  });
  describe('POST /activities', () => {
    const post = (body: Record<string, unknown>) => refused.bind(null, 'activities', ['activities', 'wikis'], body);
    const added = (body: Record<string, unknown>) =>
      created('activities', 'activities', body, {
        type: 'activity.created',
        data: () => ({ course_id: body.course_id, type: body.type, summary: `Activity ${body.type} ${quotedForSummary(body.name as string)} added.` }),
      });
    const wikiOf = (activityId: string) => t.database.db.selectFrom('wikis').select(['organisation_id', 'mode', 'created_at']).where('activity_id', '=', activityId).execute();

    test('a wiki with its wiki in the mode asked (collaborative unless asked), a lesson; in a section or none', async () => {
      const course = await t.make.course(caller.org);
      const section = await t.make.section(caller.org, { course_id: course.id });
      for (const name of names) {
        const wiki = await added({ course_id: course.id, type: 'wiki', name });
        assert.deepEqual([wiki.body.settings, wiki.body.section_id, wiki.body.external_id], [{ mode: 'collaborative' }, null, null]);
        assert.deepEqual((await wikiOf(wiki.body.id)).map((w) => ({ ...w })), [{ organisation_id: caller.org.id, mode: 'collaborative', created_at: wiki.body.created_at }]);
        const page = await call('POST', '/wiki_pages', { activity_id: wiki.body.id, title: 'First', body: { text: 'x' } });
        assert.equal(page.status, 201, page.raw);
        const grouped = await added({ course_id: course.id, type: 'wiki', name, settings: { mode: 'group' }, section_id: section.id, external_id: `act-${crypto.randomUUID()}` });
        assert.deepEqual([grouped.body.settings, grouped.body.section_id], [{ mode: 'group' }, section.id]);
        assert.deepEqual((await wikiOf(grouped.body.id)).map((w) => w.mode), ['group']);
        const lesson = await added({ course_id: course.id, type: 'lesson', name, settings: {}, section_id: section.id });
        assert.deepEqual(lesson.body.settings, {});
        assert.deepEqual(await wikiOf(lesson.body.id), []);
      }
    });

    test('every refusal as before, leaving nothing (no wiki either)', async () => {
      const course = await t.make.course(caller.org);
      const section = await t.make.section(caller.org, { course_id: course.id });
      const taken = await added({ course_id: course.id, type: 'wiki', name: 'Taken', external_id: `act-${crypto.randomUUID()}` });
      await post({ course_id: crypto.randomUUID(), type: 'wiki', name: 'X' })(422, 'validation.invalid_body', '/course_id');
      await post({ course_id: course.id, type: 'wiki', name: 'X', external_id: taken.body.external_id })(409, 'resource.external_id_taken');
      await post({ course_id: course.id, type: 'wiki', name: 'X', section_id: crypto.randomUUID() })(422, 'validation.invalid_body', '/section_id');
      const elsewhere = await t.make.section(caller.org);
      await post({ course_id: course.id, type: 'wiki', name: 'X', section_id: elsewhere.id })(422, 'validation.invalid_body', '/section_id');
      await post({ course_id: course.id, type: 'lesson', name: 'X', settings: { mode: 'group' } })(422, 'validation.invalid_body', '/settings/mode');
      // The section is checked before the settings.
      await post({ course_id: course.id, type: 'lesson', name: 'X', settings: { mode: 'group' }, section_id: elsewhere.id })(422, 'validation.invalid_body', '/section_id');
      assert.equal((await call('DELETE', `/sections/${section.id}`)).status, 204);
      await post({ course_id: course.id, type: 'wiki', name: 'X', section_id: section.id })(422, 'validation.invalid_body', '/section_id');
      await switched('mod_wiki', false);
      try {
        await post({ course_id: course.id, type: 'wiki', name: 'X' })(409, 'extension.disabled');
        // The switch is checked before the section, the course before the switch.
        await post({ course_id: course.id, type: 'wiki', name: 'X', section_id: section.id })(409, 'extension.disabled');
        await post({ course_id: crypto.randomUUID(), type: 'wiki', name: 'X' })(422, 'validation.invalid_body', '/course_id');
      } finally {
        await switched('mod_wiki', true);
      }
      assert.equal((await call('DELETE', `/courses/${course.id}`)).status, 204);
      await post({ course_id: course.id, type: 'wiki', name: 'X' })(409, 'course.deleted');
      await post({ course_id: course.id, type: 'lesson', name: 'X', settings: { mode: 'group' } })(409, 'course.deleted');
    });
  });
  describe('POST /files', () => {
    const stored = (body: { filename: string; content_type?: string; content_base64: string }, targetId: string) =>
      created('files', 'files', body, { type: 'file.created', data: () => ({ storage_target_id: targetId, summary: `File ${JSON.stringify(body.filename)} stored.` }), action: 'uploadFile' });
    const content = async (id: string) => (await call('GET', `/files/${id}/content`)).raw;
    /** The bytes on disk of the organisation's files in `directory`, by file id: only those some row points at. */
    const onDisk = (directory: string) => {
      const dir = path.join(directory, caller.org.id);
      return fs.existsSync(dir) ? fs.readdirSync(dir).sort() : [];
    };
    const rowsOn = async (targetId: string | null) =>
      (await t.database.db.selectFrom('files').select('id').where('organisation_id', '=', caller.org.id).where('storage_target_id', targetId === null ? 'is' : '=', targetId).orderBy('id').execute()).map((r) => r.id).sort();

    test('each written to the default target as it is now, which it remembers; its bytes readable, no stray bytes left', async () => {
      // Each change of the default finds the process holding the old one (at first none): the next file goes to the new one.
      const target = await call('POST', '/storage_targets', { name: 'Archive', directory: `archive/${crypto.randomUUID()}` });
      assert.equal(target.status, 201, target.raw);
      const makeDefault = async () => assert.equal((await call('POST', `/storage_targets/${target.body.id}/actions/make_default`)).status, 200);
      await makeDefault();
      for (const filename of ['b.txt', 'c.txt']) {
        const res = await stored({ filename, content_base64: Buffer.from(filename).toString('base64') }, target.body.id);
        assert.equal(await content(res.body.id), filename);
      }
      assert.equal((await call('POST', '/storage_targets/actions/restore_deployment', {})).status, 200);
      for (const filename of ['a.txt', 'Quotes " and \u2028 and ☃ 𝄞.bin', 'x'.repeat(255)]) {
        const bytes = `${filename}: ${crypto.randomUUID()}`;
        const res = await stored({ filename, content_type: 'text/plain', content_base64: Buffer.from(bytes).toString('base64') }, 'deployment');
        assert.deepEqual([res.body.size, res.body.content_type, res.body.storage_target_id], [Buffer.byteLength(bytes), 'text/plain', 'deployment']);
        assert.equal(await content(res.body.id), bytes);
      }
      const plain = await stored({ filename: 'raw', content_base64: '' }, 'deployment');
      assert.deepEqual([plain.body.size, plain.body.content_type, plain.body.sha256], [0, 'application/octet-stream', createHash('sha256').update('').digest('hex')]);
      await makeDefault();
      const back = await stored({ filename: 'd.txt', content_base64: Buffer.from('d').toString('base64') }, target.body.id);
      assert.equal(await content(back.body.id), 'd');
      assert.deepEqual(onDisk(t.config.storageDir), await rowsOn(null));
      assert.deepEqual(onDisk(path.join(t.config.storageTargetsRoot, target.body.directory)), await rowsOn(target.body.id));
    });

    test('a body refused as before, leaving nothing', async () => {
      await refused('files', 'files', { filename: 'a/b', content_base64: '' }, 422, 'validation.invalid_body', '/filename');
      await refused('files', 'files', { filename: 'a', content_base64: 'not base64!' }, 422, 'validation.invalid_body', '/content_base64');
    });
  });
});
