import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, manualClock, type TestContext } from '../../../test/support/harness.ts';
import type { Caller } from '../../../test/support/factories.ts';
import { demoSteps, type SeedContext } from '../../cli/seed-demo.ts';

const UNKNOWN = '01a1ffb1-ef6f-770b-ba7c-b487911c9252';

describe('lesson pages', () => {
  const clock = manualClock(new Date('2026-11-05T08:00:00.000Z'));
  let t: TestContext;
  let admin: Caller;
  before(async () => {
    t = await startTestApp({ clock });
    admin = await t.make.caller();
  });
  after(() => t.close());

  const as = (c: Caller) => ({ host: c.org.address, key: c.key });
  const post = (body: unknown, c: Caller = admin) => t.api.request({ ...as(c), method: 'POST', path: '/lesson_pages', body });
  const patch = (id: string, body: unknown, c: Caller = admin) => t.api.request({ ...as(c), method: 'PATCH', path: `/lesson_pages/${id}`, body });
  const titlesOf = async (lessonId: string, query = '') =>
    (await t.api.request({ ...as(admin), path: `/lesson_pages?lesson_id=${lessonId}${query}` })).body.data.map((p: { title: string }) => p.title);
  const eventsOf = (c: Caller, id: string) =>
    t.database.db.selectFrom('outbox_events').selectAll().where('organisation_id', '=', c.org.id).orderBy('id').execute().then((rows) => rows.filter((e) => JSON.parse(e.data).id === id));
  const paths = (body: { errors: { path: string }[] }) => body.errors.map((e) => e.path).sort();

  describe('create, read, list', () => {
    test('201 appends a page at the end of its lesson with defaults; the read returns it; the event names the lesson', async () => {
      const lesson = await t.make.lesson(admin.org);
      const first = await post({ lesson_id: lesson.id, title: 'Welcome' });
      assert.equal(first.status, 201);
      assert.deepEqual(
        { ...first.body, id: undefined, sort_key: undefined },
        {
          id: undefined,
          external_id: null,
          lesson_id: lesson.id,
          course_id: lesson.course_id,
          title: 'Welcome',
          page_type: 'content',
          contents: null,
          answers: [],
          sort_key: undefined,
          created_at: clock.now().toISOString(),
          updated_at: clock.now().toISOString(),
          deleted_at: null,
        },
      );
      const question = await post({
        lesson_id: lesson.id,
        title: 'True or false?',
        page_type: 'truefalse',
        contents: { format: 'html', content: '<p>The sun is a star.</p>' },
        answers: [{ text: 'True', score: 1 }, { text: 'False', response: 'It is a star.', jump_to: 'this_page' }],
        external_id: 'q-1',
      });
      assert.equal(question.status, 201);
      assert.ok(question.body.sort_key > first.body.sort_key);
      assert.deepEqual(question.body.answers, [
        { text: 'True', response: null, score: 1, jump_to: 'next_page' },
        { text: 'False', response: 'It is a star.', score: 0, jump_to: 'this_page' },
      ]);
      assert.deepEqual((await t.api.request({ ...as(admin), path: `/lesson_pages/${question.body.id}` })).body, question.body);
      assert.deepEqual((await t.api.request({ ...as(admin), path: '/lesson_pages/ext:q-1' })).body, question.body);
      const [event] = await eventsOf(admin, question.body.id);
      assert.equal(event.type, 'lesson_page.created');
      assert.deepEqual(JSON.parse(event.data), { id: question.body.id, lesson_id: lesson.id, course_id: lesson.course_id, summary: 'Lesson page "True or false?" added.' });
    });

    test('after_page_id places a page right after another; null places it first; the list is in lesson order', async () => {
      const lesson = await t.make.lesson(admin.org);
      const a = await post({ lesson_id: lesson.id, title: 'A' });
      await post({ lesson_id: lesson.id, title: 'C' });
      await post({ lesson_id: lesson.id, title: 'B', after_page_id: a.body.id });
      await post({ lesson_id: lesson.id, title: 'Start', after_page_id: null });
      assert.deepEqual(await titlesOf(lesson.id), ['Start', 'A', 'B', 'C']);
      // Paging keeps the order across pages.
      const one = await t.api.request({ ...as(admin), path: `/lesson_pages?lesson_id=${lesson.id}&limit=3` });
      const two = await t.api.request({ ...as(admin), path: `/lesson_pages?lesson_id=${lesson.id}&limit=3&cursor=${encodeURIComponent(one.body.page.next_cursor)}` });
      assert.deepEqual([...one.body.data, ...two.body.data].map((p: { title: string }) => p.title), ['Start', 'A', 'B', 'C']);
      assert.equal(two.body.page.has_more, false);
    });

    const invalid: Array<[string, Record<string, unknown>, string[]]> = [
      ['a blank title', { title: '   ' }, ['/title']],
      ['an unknown page type', { page_type: 'quiz' }, ['/page_type']],
      ['a truefalse page with one answer', { page_type: 'truefalse', answers: [{ text: 'True' }] }, ['/answers']],
      ['a multichoice answer without text', { page_type: 'multichoice', answers: [{ text: 'A' }, { text: ' ' }] }, ['/answers/1/text']],
      ['a numerical answer that is no number', { page_type: 'numerical', answers: [{ text: '4' }, { text: 'four' }, { text: '1:10' }] }, ['/answers/1/text']],
      ['a matching answer without its match', { page_type: 'matching', answers: [{ text: 'H2O', response: 'water' }, { text: 'NaCl' }] }, ['/answers/1/response']],
      ['an end of branch with two answers', { page_type: 'end_of_branch', answers: [{ text: '' }, { text: '' }] }, ['/answers']],
      ['a jump to an unknown page', { answers: [{ text: 'Go', jump_to: UNKNOWN }] }, ['/answers/0/jump_to']],
      ['a jump that is neither a keyword nor a page', { answers: [{ text: 'Go', jump_to: 'somewhere' }] }, ['/answers/0/jump_to']],
      ['a score out of range', { answers: [{ text: 'Go', score: 1001 }] }, ['/answers/0/score']],
      ['contents in an unknown format', { contents: { format: 'rtf', content: 'x' } }, ['/contents/format']],
      ['an unknown field', { colour: 'red' }, ['/colour']],
      ['an unknown lesson', { lesson_id: UNKNOWN }, ['/lesson_id']],
      ['an unknown page to go after', { after_page_id: UNKNOWN }, ['/after_page_id']],
    ];
    for (const [name, fields, expected] of invalid) {
      test(`422 for ${name}, naming the field, and nothing is written`, async () => {
        const lesson = await t.make.lesson(admin.org);
        const res = await post({ lesson_id: lesson.id, title: 'Q', ...fields });
        assert.equal(res.status, 422, JSON.stringify(res.body));
        assert.equal(res.body.code, 'validation.invalid_body');
        assert.deepEqual(paths(res.body), expected);
        assert.deepEqual(await titlesOf(lesson.id), []);
      });
    }

    test('the lesson must be a live lesson: a wiki is a 422 at /lesson_id, a deleted lesson a 409', async () => {
      const wiki = await t.make.activity(admin.org);
      const wrong = await post({ lesson_id: wiki.id, title: 'Q' });
      assert.equal(wrong.status, 422);
      assert.deepEqual(wrong.body.errors.map((e: { code: string }) => e.code), ['wrong_type']);
      const lesson = await t.make.lesson(admin.org);
      assert.equal((await t.api.request({ ...as(admin), method: 'DELETE', path: `/activities/${lesson.id}` })).status, 204);
      const deleted = await post({ lesson_id: lesson.id, title: 'Q' });
      assert.equal(deleted.status, 409);
      assert.equal(deleted.body.code, 'activity.deleted');
    });

    test('a jump to a page of another lesson is refused; to a live page of the same lesson accepted', async () => {
      const lesson = await t.make.lesson(admin.org);
      const other = await t.make.lessonPage(admin.org);
      const target = await t.make.lessonPage(admin.org, { lesson_id: lesson.id });
      const refused = await post({ lesson_id: lesson.id, title: 'Q', answers: [{ text: 'Go', jump_to: other.id }] });
      assert.equal(refused.status, 422);
      assert.deepEqual(paths(refused.body), ['/answers/0/jump_to']);
      const ok = await post({ lesson_id: lesson.id, title: 'Q', answers: [{ text: 'Go', jump_to: target.id }] });
      assert.equal(ok.status, 201);
      assert.equal(ok.body.answers[0].jump_to, target.id);
    });

    test('409 for an external_id another page has', async () => {
      const page = await t.make.lessonPage(admin.org);
      const res = await post({ lesson_id: page.lesson_id, title: 'Q', external_id: page.external_id });
      assert.equal(res.status, 409);
      assert.equal(res.body.code, 'resource.external_id_taken');
    });

    test('updated_since lists changes in order of change', async () => {
      const c = await t.make.caller();
      const lesson = await t.make.lesson(c.org);
      const a = await t.make.lessonPage(c.org, { lesson_id: lesson.id, title: 'A' });
      const b = await t.make.lessonPage(c.org, { lesson_id: lesson.id, title: 'B' });
      clock.advance(1000);
      const since = clock.now().toISOString();
      clock.advance(1000);
      await patch(b.id, { title: 'B2' }, c);
      clock.advance(1000);
      await patch(a.id, { title: 'A2' }, c);
      const res = await t.api.request({ ...as(c), path: `/lesson_pages?updated_since=${encodeURIComponent(since)}` });
      assert.deepEqual(res.body.data.map((p: { title: string }) => p.title), ['B2', 'A2']);
    });
  });

  describe('PATCH /lesson_pages/{id}', () => {
    test('changes the fields given and keeps the others; the event says what changed', async () => {
      const page = await t.make.lessonPage(admin.org, { title: 'Intro' });
      clock.advance(60_000);
      const res = await patch(page.id, { page_type: 'multichoice', answers: [{ text: 'A', score: 1 }, { text: 'B' }], contents: { format: 'plain', content: 'Pick one' } });
      assert.equal(res.status, 200);
      assert.equal(res.body.title, 'Intro');
      assert.equal(res.body.page_type, 'multichoice');
      assert.equal(res.body.answers.length, 2);
      assert.equal(res.body.updated_at, clock.now().toISOString());
      const events = await eventsOf(admin, page.id);
      assert.equal(events.at(-1)!.type, 'lesson_page.updated');
      assert.equal(JSON.parse(events.at(-1)!.data).summary, 'Lesson page "Intro" changed: page type, contents, answers.');
    });

    test('a change that changes nothing answers 200 without an event or a new updated_at', async () => {
      const page = await t.make.lessonPage(admin.org, { title: 'Same' });
      clock.advance(1000);
      const res = await patch(page.id, { title: 'Same', answers: [], after_page_id: null });
      assert.equal(res.status, 200);
      assert.equal(res.body.updated_at, page.updated_at);
      assert.equal((await eventsOf(admin, page.id)).length, 1);
    });

    test('a new page type must suit the answers the page has (422 at /answers)', async () => {
      const lesson = await t.make.lesson(admin.org);
      const page = await post({ lesson_id: lesson.id, title: 'Q', page_type: 'multichoice', answers: [{ text: 'A' }, { text: 'B' }, { text: 'C' }] });
      const res = await patch(page.body.id, { page_type: 'truefalse' });
      assert.equal(res.status, 422);
      assert.deepEqual(paths(res.body), ['/answers']);
      assert.match(res.body.errors[0].detail, /exactly 2 answers; it has 3/);
    });

    test('after_page_id moves the page; it cannot go after itself', async () => {
      const lesson = await t.make.lesson(admin.org);
      const pages = [];
      for (const title of ['A', 'B', 'C']) pages.push(await t.make.lessonPage(admin.org, { lesson_id: lesson.id, title }));
      assert.equal((await patch(pages[0].id, { after_page_id: pages[2].id })).status, 200);
      assert.deepEqual(await titlesOf(lesson.id), ['B', 'C', 'A']);
      assert.equal((await patch(pages[2].id, { after_page_id: null })).status, 200);
      assert.deepEqual(await titlesOf(lesson.id), ['C', 'B', 'A']);
      const self = await patch(pages[1].id, { after_page_id: pages[1].id });
      assert.equal(self.status, 422);
      assert.deepEqual(paths(self.body), ['/after_page_id']);
    });

    test('404 for an unknown page; 409 for a deleted page or a page of a deleted lesson', async () => {
      const unknown = await patch(UNKNOWN, { title: 'x' });
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.code, 'lesson_page.not_found');
      const page = await t.make.lessonPage(admin.org);
      assert.equal((await t.api.request({ ...as(admin), method: 'DELETE', path: `/lesson_pages/${page.id}` })).status, 204);
      const deleted = await patch(page.id, { title: 'x' });
      assert.equal(deleted.status, 409);
      assert.equal(deleted.body.code, 'lesson_page.deleted');
      const other = await t.make.lessonPage(admin.org);
      await t.api.request({ ...as(admin), method: 'DELETE', path: `/activities/${other.lesson_id}` });
      const inDeletedLesson = await patch(other.id, { title: 'x' });
      assert.equal(inDeletedLesson.status, 409);
      assert.equal(inDeletedLesson.body.code, 'activity.deleted');
    });
  });

  describe('DELETE and sync', () => {
    test('delete is soft: the page leaves lists unless include_deleted, stays readable, and has a tombstone', async () => {
      const c = await t.make.caller();
      const lesson = await t.make.lesson(c.org);
      const keep = await t.make.lessonPage(c.org, { lesson_id: lesson.id, title: 'Keep' });
      const gone = await t.make.lessonPage(c.org, { lesson_id: lesson.id, title: 'Gone' });
      clock.advance(1000);
      assert.equal((await t.api.request({ ...as(c), method: 'DELETE', path: `/lesson_pages/${gone.id}` })).status, 204);
      const listed = await t.api.request({ ...as(c), path: `/lesson_pages?lesson_id=${lesson.id}` });
      assert.deepEqual(listed.body.data.map((p: { id: string }) => p.id), [keep.id]);
      const all = await t.api.request({ ...as(c), path: `/lesson_pages?lesson_id=${lesson.id}&include_deleted=true` });
      assert.equal(all.body.data.length, 2);
      const read = await t.api.request({ ...as(c), path: `/lesson_pages/${gone.id}` });
      assert.equal(read.body.deleted_at, clock.now().toISOString());
      const tombstones = await t.api.request({ ...as(c), path: '/lesson_pages/deletions' });
      assert.deepEqual(tombstones.body.data, [{ id: gone.id, external_id: gone.external_id, deleted_at: clock.now().toISOString() }]);
      const again = await t.api.request({ ...as(c), method: 'DELETE', path: `/lesson_pages/${gone.id}` });
      assert.equal(again.status, 409);
      assert.equal(again.body.code, 'lesson_page.deleted');
      assert.equal((await t.api.request({ ...as(c), method: 'DELETE', path: `/lesson_pages/${UNKNOWN}` })).status, 404);
    });

    test('PUT ext: creates (201), then updates (200) keeping fields left out; the lesson cannot change (422)', async () => {
      const lesson = await t.make.lesson(admin.org);
      const body = { lesson_id: lesson.id, title: 'Essay', page_type: 'essay', contents: { format: 'markdown', content: 'Discuss.' } };
      const created = await t.api.request({ ...as(admin), method: 'PUT', path: '/lesson_pages/ext:essay-1', body });
      assert.equal(created.status, 201);
      assert.equal(created.body.external_id, 'essay-1');
      const updated = await t.api.request({ ...as(admin), method: 'PUT', path: '/lesson_pages/ext:essay-1', body: { lesson_id: lesson.id, title: 'Essay (long)' } });
      assert.equal(updated.status, 200);
      assert.equal(updated.body.id, created.body.id);
      assert.equal(updated.body.page_type, 'essay');
      assert.deepEqual(updated.body.contents, body.contents);
      const other = await t.make.lesson(admin.org);
      const moved = await t.api.request({ ...as(admin), method: 'PUT', path: '/lesson_pages/ext:essay-1', body: { lesson_id: other.id, title: 'Essay' } });
      assert.equal(moved.status, 422);
      assert.deepEqual(paths(moved.body), ['/lesson_id']);
    });

    test('atrium seed demo: a lesson with a branch and a page of every question type, one button jumping to a page', async () => {
      const c = await t.make.caller();
      await t.database.db.transaction().execute(async (trx) => {
        const seed: SeedContext = { db: trx, services: t.app.services, organisationId: c.org.id, created: {} };
        for (const step of demoSteps) seed.created[step.collection] = await step.run(seed);
      });
      const lesson = await t.api.request({ ...as(c), path: '/activities/ext:demo-activity-bio101-photosynthesis' });
      assert.equal(lesson.body.type, 'lesson');
      const pages = (await t.api.request({ ...as(c), path: `/lesson_pages?lesson_id=${lesson.body.id}` })).body.data;
      assert.deepEqual(
        pages.map((p: { page_type: string }) => p.page_type),
        ['content', 'content', 'end_of_branch', 'multichoice', 'truefalse', 'numerical', 'matching', 'essay'],
      );
      const gas = pages.find((p: { external_id: string }) => p.external_id === 'demo-lesson-bio101-photosynthesis-gas');
      assert.equal(pages[0].answers[1].jump_to, gas.id);
    });

    test('teachers manage pages; a person without lesson/manage_pages cannot', async () => {
      const lesson = await t.make.lesson(admin.org);
      const teacher = await t.make.caller({ org: admin.org, roles: ['teacher'], platformAdmin: false });
      assert.equal((await post({ lesson_id: lesson.id, title: 'By a teacher' }, teacher)).status, 201);
      const viewer = await t.make.caller({ org: admin.org, roles: [], platformAdmin: false });
      const refused = await post({ lesson_id: lesson.id, title: 'No' }, viewer);
      assert.equal(refused.status, 403);
      assert.match(refused.body.detail, /lesson\/manage_pages/);
    });
  });
});
