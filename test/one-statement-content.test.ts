// PATCH and DELETE by id of activities, lesson pages, email messages and wiki pages without an Idempotency-Key
// are, on PostgreSQL, one statement sent with the request's audit entry and COMMIT (src/db/final-statement.ts):
// the database makes the change and its event, and what it could not change (absent, deleted, already so, a
// rule of the area not met) sends the request down its full path. On SQLite the same request takes that path at
// once. Both must answer, record and refuse alike: this file runs on both and holds them to the same outcomes,
// byte for byte where an event's data is concerned.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestAppWithCaller, type TestContext } from './support/harness.ts';
import type { Caller } from './support/factories.ts';
import type { ApiRequest } from './support/api-client.ts';
import { writeTraces } from './support/write-traces.ts';

/** How summaries quote a name: a JSON string, cut to 77 characters and `...` past 80 (characters, not UTF-16 units). */
const quoted = (text: string) => {
  const chars = [...text];
  return JSON.stringify(chars.length > 80 ? `${chars.slice(0, 77).join('')}...` : text);
};

// Names that JSON must escape, that SQL's to_json and JavaScript's JSON.stringify could write differently, and
// past 80 characters with characters of two UTF-16 units.
const NAMES = ['Plain', 'Quotes " and \\ and\nnew line\ttab', 'Ünïcödé ☃ 𝄞 and \u2028', '😀'.repeat(79) + 'ab', 'x'.repeat(120)];

describe('PATCH and DELETE of content by id: the change, its event and its audit entry, in one statement or on the full path', () => {
  let t: TestContext;
  let caller: Caller;
  before(async () => ({ t, caller } = await startTestAppWithCaller()));
  after(() => t?.close());

  const call = (method: ApiRequest['method'], path: string, body?: unknown) => t.api.request({ host: caller.org.address, key: caller.key, method, path, ...(body === undefined ? {} : { body }) });
  const { eventsOf, tombstonesOf: tombstones, ...traces } = writeTraces(() => ({ t, caller }));
  const successEntries = async (id: string) => (await traces.successEntries(id, ['action', 'status'])).map((e) => [e.action, e.status]);

  /** A millisecond passes, so that a change's updated_at differs from its creation's (and a no-op's shows it stayed). */
  const tick = () => new Promise((resolve) => setTimeout(resolve, 2));

  /**
   * PATCHes `collection`/`made.id` a millisecond after `made` was made and holds the answer to a change: 200, a new
   * updated_at, the read showing what was answered, the created event then the one `data` (byte for byte) of type
   * `eventType`, and one success entry of `action`. Answers the response, for what else the area checks.
   */
  async function changed(collection: string, made: { id: string; updated_at: string }, body: unknown, eventType: string, data: unknown, action: string) {
    await tick();
    const res = await call('PATCH', `/${collection}/${made.id}`, body);
    assert.equal(res.status, 200, res.raw);
    assert.ok(res.body.updated_at > made.updated_at);
    assert.deepEqual((await call('GET', `/${collection}/${made.id}`)).body, res.body);
    const events = await eventsOf(made.id);
    assert.deepEqual(events.slice(1).map((e) => [e.type, e.data]), [[eventType, JSON.stringify(data)]]);
    assert.deepEqual(await successEntries(made.id), [[action, 200]]);
    return res;
  }

  /** DELETEs `collection`/`made.id` and holds the answer to a delete: 204, the one event `data`, the tombstone, one success entry. */
  async function deleted(collection: string, made: { id: string; external_id: string | null }, eventType: string, data: unknown, action: string) {
    assert.equal((await call('DELETE', `/${collection}/${made.id}`)).status, 204);
    assert.deepEqual((await eventsOf(made.id)).slice(1).map((e) => [e.type, e.data]), [[eventType, JSON.stringify(data)]]);
    assert.deepEqual(await tombstones(made.id), [{ resource_type: eventType.split('.')[0], external_id: made.external_id }]);
    assert.deepEqual(await successEntries(made.id), [[action, 204]]);
  }

  /** A bulk request (operation 8 or 9) to `collection`, with the Idempotency-Key it requires. */
  const bulk = (collection: string, body: unknown) =>
    t.api.request({ host: caller.org.address, key: caller.key, method: 'POST', path: `/${collection}/bulk`, headers: { 'idempotency-key': `content-${crypto.randomUUID()}` }, body });

  /** The refusal's status and code, and that it left no event and no success entry behind. */
  async function refused(res: { status: number; body: { code?: string } }, id: string, status: number, code: string, eventsBefore: number) {
    assert.equal(res.status, status, JSON.stringify(res.body));
    assert.equal(res.body.code, code);
    assert.equal((await eventsOf(id)).length, eventsBefore);
  }

  describe('PATCH /activities/{id}', () => {
    test('a rename answers the activity with its settings, and its event data is what EventRecorder writes', async () => {
      for (const name of NAMES) {
        const activity = await t.make.activity(caller.org, { settings: { mode: 'individual' } });
        const event = { id: activity.id, course_id: activity.course_id, type: 'wiki', summary: `Activity wiki ${quoted(name)} changed: name.` };
        const res = await changed('activities', activity, { name }, 'activity.updated', event, 'updateActivity');
        assert.equal(res.body.name, name);
        assert.deepEqual(res.body.settings, { mode: 'individual' });
      }
    });

    test('a move names only what really changed; an activity without settings answers none', async () => {
      const lesson = await t.make.lesson(caller.org, { name: 'Lesson one' });
      const section = await t.make.section(caller.org, { course_id: lesson.course_id });
      const moved = await call('PATCH', `/activities/${lesson.id}`, { name: 'Lesson one', section_id: section.id });
      assert.equal(moved.status, 200, moved.raw);
      assert.equal(moved.body.section_id, section.id);
      assert.deepEqual(moved.body.settings, {});
      const both = await call('PATCH', `/activities/${lesson.id}`, { name: 'Lesson two', section_id: null });
      assert.equal(both.status, 200, both.raw);
      assert.equal(both.body.section_id, null);
      const events = await eventsOf(lesson.id);
      assert.deepEqual(
        events.slice(1).map((e) => JSON.parse(e.data).summary),
        ['Activity lesson "Lesson one" changed: section_id.', 'Activity lesson "Lesson two" changed: name, section_id.'],
      );
    });

    test('a PATCH that changes nothing answers the activity as it is: no event, no new updated_at', async () => {
      const activity = await t.make.activity(caller.org, { name: 'Same' });
      await tick();
      const res = await call('PATCH', `/activities/${activity.id}`, { name: 'Same', section_id: null });
      assert.equal(res.status, 200);
      assert.equal(res.body.updated_at, activity.updated_at);
      assert.deepEqual(res.body.settings, { mode: 'collaborative' });
      assert.deepEqual((await eventsOf(activity.id)).map((e) => e.type), ['activity.created']);
      assert.deepEqual(await successEntries(activity.id), [['updateActivity', 200]]);
    });

    test('404 absent, 409 deleted, 422 for a section that is not a live section of its course; nothing changes', async () => {
      await refused(await call('PATCH', `/activities/${crypto.randomUUID()}`, { name: 'Nobody' }), crypto.randomUUID(), 404, 'activity.not_found', 0);
      const activity = await t.make.activity(caller.org);
      const elsewhere = await t.make.section(caller.org);
      const gone = await t.make.section(caller.org, { course_id: activity.course_id });
      assert.equal((await call('DELETE', `/sections/${gone.id}`)).status, 204);
      for (const sectionId of [elsewhere.id, gone.id, crypto.randomUUID()]) {
        const res = await call('PATCH', `/activities/${activity.id}`, { name: 'Moved', section_id: sectionId });
        await refused(res, activity.id, 422, 'validation.invalid_body', 1);
        assert.equal((res.body as { errors: Array<{ path: string }> }).errors[0].path, '/section_id');
      }
      assert.equal((await call('GET', `/activities/${activity.id}`)).body.name, activity.name);
      assert.equal((await call('DELETE', `/activities/${activity.id}`)).status, 204);
      await refused(await call('PATCH', `/activities/${activity.id}`, { name: 'Too late' }), activity.id, 409, 'activity.deleted', 2);
      assert.deepEqual(await successEntries(activity.id), [['deleteActivity', 204]]);
    });
  });

  describe('PATCH and DELETE /lesson_pages/{id}', () => {
    test('a new title or contents answers the page, and its event names what really changed', async () => {
      for (const title of NAMES) {
        const page = await t.make.lessonPage(caller.org);
        const event = { id: page.id, lesson_id: page.lesson_id, course_id: page.course_id, summary: `Lesson page ${quoted(title)} changed: title, contents.` };
        const res = await changed('lesson_pages', page, { title, contents: { format: 'html', content: '<p>Hi</p>' } }, 'lesson_page.updated', event, 'updateLessonPage');
        assert.equal(res.body.title, title);
        assert.deepEqual(res.body.contents, { format: 'html', content: '<p>Hi</p>' });
      }
      const page = await t.make.lessonPage(caller.org, { title: 'Kept' });
      assert.equal((await call('PATCH', `/lesson_pages/${page.id}`, { title: 'Kept', contents: null })).status, 200);
      assert.equal((await call('PATCH', `/lesson_pages/${page.id}`, { title: 'Kept', contents: { format: 'plain', content: 'x' } })).status, 200);
      assert.deepEqual((await eventsOf(page.id)).map((e) => e.type), ['lesson_page.created', 'lesson_page.updated']);
      assert.equal(JSON.parse((await eventsOf(page.id))[1].data).summary, 'Lesson page "Kept" changed: contents.');
    });

    test('a PATCH that changes nothing answers the page as it is: no event, no new updated_at', async () => {
      const page = await t.make.lessonPage(caller.org, { title: 'Same' });
      await tick();
      const res = await call('PATCH', `/lesson_pages/${page.id}`, { title: 'Same' });
      assert.equal(res.status, 200);
      assert.equal(res.body.updated_at, page.updated_at);
      assert.deepEqual((await eventsOf(page.id)).map((e) => e.type), ['lesson_page.created']);
      assert.deepEqual(await successEntries(page.id), [['updateLessonPage', 200]]);
    });

    test('a delete leaves its tombstone and an event quoting the title as the service does', async () => {
      for (const title of NAMES) {
        const page = await t.make.lessonPage(caller.org, { title });
        const event = { id: page.id, lesson_id: page.lesson_id, course_id: page.course_id, summary: `Lesson page ${quoted(title)} deleted.` };
        await deleted('lesson_pages', page, 'lesson_page.deleted', event, 'deleteLessonPage');
        assert.ok((await t.database.db.selectFrom('lesson_pages').select('deleted_at').where('id', '=', page.id).executeTakeFirstOrThrow()).deleted_at);
      }
    });

    test('404 absent, 409 for a deleted page and for a page of a deleted lesson; nothing changes', async () => {
      const absent = crypto.randomUUID();
      await refused(await call('PATCH', `/lesson_pages/${absent}`, { title: 'Nobody' }), absent, 404, 'lesson_page.not_found', 0);
      await refused(await call('DELETE', `/lesson_pages/${absent}`), absent, 404, 'lesson_page.not_found', 0);
      const page = await t.make.lessonPage(caller.org);
      assert.equal((await call('DELETE', `/lesson_pages/${page.id}`)).status, 204);
      await refused(await call('PATCH', `/lesson_pages/${page.id}`, { title: 'Too late' }), page.id, 409, 'lesson_page.deleted', 2);
      await refused(await call('DELETE', `/lesson_pages/${page.id}`), page.id, 409, 'lesson_page.deleted', 2);
      assert.deepEqual(await tombstones(page.id), [{ resource_type: 'lesson_page', external_id: page.external_id }]);

      const orphan = await t.make.lessonPage(caller.org);
      assert.equal((await call('DELETE', `/activities/${orphan.lesson_id}`)).status, 204);
      await refused(await call('PATCH', `/lesson_pages/${orphan.id}`, { title: 'Orphan' }), orphan.id, 409, 'activity.deleted', 1);
      await refused(await call('DELETE', `/lesson_pages/${orphan.id}`), orphan.id, 409, 'activity.deleted', 1);
      assert.deepEqual(await tombstones(orphan.id), []);
      assert.deepEqual(await successEntries(orphan.id), []);
    });
  });

  describe('PATCH and DELETE /email_messages/{id}', () => {
    const inHours = (h: number) => new Date(t.clock.now().getTime() + h * 3_600_000).toISOString();
    const setStatus = (id: string, status: 'sending' | 'sent' | 'cancelled') => t.database.db.updateTable('email_messages').set({ status }).where('id', '=', id).execute();
    const summaries = async (id: string) => (await eventsOf(id)).slice(1).map((e) => JSON.parse(e.data).summary);

    test('a change answers the message, and its event data is what EventRecorder writes', async () => {
      for (const subject of NAMES) {
        const message = await t.make.emailMessage(caller.org);
        const event = { id: message.id, summary: `Email message ${quoted(subject)} changed: subject, body.` };
        const res = await changed('email_messages', message, { subject, body: { format: 'markdown', content: '*Hi*' } }, 'email_message.updated', event, 'updateEmailMessage');
        assert.equal(res.body.subject, subject);
        assert.deepEqual(res.body.body, { format: 'markdown', content: '*Hi*' });
      }
    });

    test('scheduling, unscheduling and cancelling are worded by the new status; a send_at alone by its name', async () => {
      const message = await t.make.emailMessage(caller.org, { subject: 'Term dates' });
      const at = inHours(2);
      const scheduled = await call('PATCH', `/email_messages/${message.id}`, { status: 'scheduled', send_at: at.replace('Z', '+00:00') });
      assert.equal(scheduled.status, 200, scheduled.raw);
      assert.equal(scheduled.body.send_at, at);
      const later = inHours(3);
      assert.equal((await call('PATCH', `/email_messages/${message.id}`, { send_at: later })).status, 200);
      assert.equal((await call('PATCH', `/email_messages/${message.id}`, { status: 'draft' })).status, 200);
      const scheduledAgain = await call('PATCH', `/email_messages/${message.id}`, { status: 'scheduled' });
      assert.equal(scheduledAgain.status, 200, scheduledAgain.raw);
      assert.equal((await call('PATCH', `/email_messages/${message.id}`, { status: 'cancelled', subject: 'Term dates' })).status, 200);
      assert.deepEqual(await summaries(message.id), [
        `Email message "Term dates" scheduled for ${at}.`,
        'Email message "Term dates" changed: send_at.',
        'Email message "Term dates" unscheduled (back to draft).',
        `Email message "Term dates" scheduled for ${later}.`,
        'Email message "Term dates" cancelled.',
      ]);
    });

    test('a PATCH that changes nothing answers the message as it is, whatever its state: no event, no new updated_at', async () => {
      const message = await t.make.emailMessage(caller.org, { subject: 'Same' });
      await tick();
      await setStatus(message.id, 'sent');
      const res = await call('PATCH', `/email_messages/${message.id}`, { subject: 'Same', body: message.body });
      assert.equal(res.status, 200, res.raw);
      assert.equal(res.body.updated_at, message.updated_at);
      assert.equal(res.body.status, 'sent');
      assert.deepEqual((await eventsOf(message.id)).map((e) => e.type), ['email_message.created']);
      assert.deepEqual(await successEntries(message.id), [['updateEmailMessage', 200]]);
    });

    test('404 absent (before a send_at refused as a time), 409 deleted, sending, sent or cancelled, 422 a schedule without a time or in the past', async () => {
      const absent = crypto.randomUUID();
      await refused(await call('PATCH', `/email_messages/${absent}`, { subject: 'Nobody' }), absent, 404, 'email_message.not_found', 0);
      await refused(await call('PATCH', `/email_messages/${absent}`, { send_at: '1960-01-01T00:00:00Z' }), absent, 404, 'email_message.not_found', 0);
      for (const [status, code] of [['sending', 'email_message.sending'], ['sent', 'email_message.sent'], ['cancelled', 'email_message.cancelled']] as const) {
        const message = await t.make.emailMessage(caller.org);
        await setStatus(message.id, status);
        await refused(await call('PATCH', `/email_messages/${message.id}`, { subject: 'Changed' }), message.id, 409, code, 1);
      }
      const draft = await t.make.emailMessage(caller.org);
      const noTime = await call('PATCH', `/email_messages/${draft.id}`, { status: 'scheduled' });
      await refused(noTime, draft.id, 422, 'validation.invalid_body', 1);
      assert.equal((noTime.body as { errors: Array<{ path: string; code: string }> }).errors[0].code, 'required');
      const past = await call('PATCH', `/email_messages/${draft.id}`, { status: 'scheduled', send_at: inHours(-1) });
      await refused(past, draft.id, 422, 'validation.invalid_body', 1);
      assert.equal((past.body as { errors: Array<{ path: string; code: string }> }).errors[0].code, 'in_the_past');
      const outOfRange = await call('PATCH', `/email_messages/${draft.id}`, { send_at: '1960-01-01T00:00:00Z' });
      await refused(outOfRange, draft.id, 422, 'validation.invalid_body', 1);
      // A scheduled message whose time has passed may still change what is not its schedule.
      const due = await t.make.emailMessage(caller.org, { status: 'scheduled', send_at: inHours(1) });
      await t.database.db.updateTable('email_messages').set({ send_at: inHours(-2) }).where('id', '=', due.id).execute();
      assert.equal((await call('PATCH', `/email_messages/${due.id}`, { subject: 'Still due' })).status, 200);
      await refused(await call('PATCH', `/email_messages/${due.id}`, { send_at: inHours(-1) }), due.id, 422, 'validation.invalid_body', 2);
      assert.equal((await call('DELETE', `/email_messages/${draft.id}`)).status, 204);
      await refused(await call('PATCH', `/email_messages/${draft.id}`, { subject: 'Too late' }), draft.id, 409, 'email_message.deleted', 2);
    });

    test('a delete leaves its tombstone and its event; a scheduled message is cancelled with it; 404 absent, 409 deleted or sending', async () => {
      for (const subject of NAMES) {
        const draft = await t.make.emailMessage(caller.org, { subject });
        await deleted('email_messages', draft, 'email_message.deleted', { id: draft.id, summary: `Email message ${quoted(subject)} deleted.` }, 'deleteEmailMessage');
      }
      const scheduled = await t.make.emailMessage(caller.org, { subject: 'Soon', status: 'scheduled', send_at: inHours(1) });
      assert.equal((await call('DELETE', `/email_messages/${scheduled.id}`)).status, 204);
      const read = await call('GET', `/email_messages/${scheduled.id}`);
      assert.equal(read.body.status, 'cancelled');
      assert.ok(read.body.deleted_at);
      assert.deepEqual(await summaries(scheduled.id), ['Email message "Soon" deleted (its scheduled sending cancelled).']);
      const cancelled = await t.make.emailMessage(caller.org, { subject: 'Off' });
      await setStatus(cancelled.id, 'cancelled');
      assert.equal((await call('DELETE', `/email_messages/${cancelled.id}`)).status, 204);
      assert.deepEqual(await summaries(cancelled.id), ['Email message "Off" deleted.']);

      const absent = crypto.randomUUID();
      await refused(await call('DELETE', `/email_messages/${absent}`), absent, 404, 'email_message.not_found', 0);
      await refused(await call('DELETE', `/email_messages/${scheduled.id}`), scheduled.id, 409, 'email_message.deleted', 2);
      const sending = await t.make.emailMessage(caller.org);
      await setStatus(sending.id, 'sending');
      await refused(await call('DELETE', `/email_messages/${sending.id}`), sending.id, 409, 'email_message.sending', 1);
      assert.deepEqual(await tombstones(sending.id), []);
      assert.deepEqual(await successEntries(sending.id), []);
    });
  });
  describe('PATCH and DELETE /wiki_pages/{id}', () => {
    const versions = async (id: string) =>
      (await t.database.db.selectFrom('wiki_page_versions').select(['version', 'title', 'body', 'restored_from', 'created_by', 'created_at']).where('wiki_page_id', '=', id).orderBy('version').execute()).map((v) => ({ ...v }));
    const pageEvent = (page: { id: string; activity_id: string; course_id: string; wiki_id: string; subwiki_id: string }, summary: string) =>
      ({ id: page.id, activity_id: page.activity_id, course_id: page.course_id, wiki_id: page.wiki_id, subwiki_id: page.subwiki_id, summary });

    test('an edit makes the next version, its version row by the caller, and an event naming what changed', async () => {
      for (const title of NAMES) {
        // Made by another person: the new version is the caller's.
        const page = await t.make.wikiPage(caller.org);
        const event = pageEvent(page, `Wiki page ${quoted(title)} edited (title and body): version 2.`);
        const res = await changed('wiki_pages', page, { title, body: { text: 'New' } }, 'wiki_page.updated', event, 'updateWikiPage');
        assert.equal(res.body.title, title);
        assert.deepEqual(res.body.body, { text: 'New' });
        assert.equal(res.body.version, 2);
        assert.equal(res.body.updated_by, caller.personId);
        const rows = await versions(page.id);
        assert.deepEqual(rows.map((v) => v.version), [1, 2]);
        assert.notEqual(rows[0].created_by, caller.personId);
        assert.deepEqual(rows[1], { version: 2, title, body: JSON.stringify({ text: 'New' }), restored_from: null, created_by: caller.personId, created_at: res.body.updated_at });
      }
      const page = await t.make.wikiPage(caller.org, { title: 'Kept', body: { text: 'Old' } });
      assert.equal((await call('PATCH', `/wiki_pages/${page.id}`, { title: 'Kept', body: { text: 'Changed' } })).status, 200);
      assert.equal((await call('PATCH', `/wiki_pages/${page.id}`, { title: 'Renamed' })).status, 200);
      assert.deepEqual(
        (await eventsOf(page.id)).slice(1).map((e) => JSON.parse(e.data).summary),
        ['Wiki page "Kept" edited (body): version 2.', 'Wiki page "Renamed" edited (title): version 3.'],
      );
    });

    test('an edit that changes nothing makes no version and no event, and answers the page as it is', async () => {
      const page = await t.make.wikiPage(caller.org, { title: 'Same', body: { text: 'Same' } });
      await tick();
      const res = await call('PATCH', `/wiki_pages/${page.id}`, { title: 'Same', body: { text: 'Same' } });
      assert.equal(res.status, 200);
      assert.equal(res.body.version, 1);
      assert.equal(res.body.updated_at, page.updated_at);
      assert.deepEqual((await eventsOf(page.id)).map((e) => e.type), ['wiki_page.created']);
      assert.deepEqual((await versions(page.id)).map((v) => v.version), [1]);
      assert.deepEqual(await successEntries(page.id), [['updateWikiPage', 200]]);
    });

    test('404 absent, 409 for a title another live page of the subwiki has, a deleted page, a page of a deleted activity', async () => {
      const absent = crypto.randomUUID();
      await refused(await call('PATCH', `/wiki_pages/${absent}`, { title: 'Nobody' }), absent, 404, 'wiki_page.not_found', 0);
      await refused(await call('DELETE', `/wiki_pages/${absent}`), absent, 404, 'wiki_page.not_found', 0);
      const first = await t.make.wikiPage(caller.org, { title: 'Taken' });
      const second = await t.make.wikiPage(caller.org, { activity_id: first.activity_id });
      await refused(await call('PATCH', `/wiki_pages/${second.id}`, { title: 'Taken', body: { text: 'x' } }), second.id, 409, 'wiki_page.title_taken', 1);
      assert.deepEqual((await versions(second.id)).map((v) => v.version), [1]);
      // Deleted, its title is free again.
      assert.equal((await call('DELETE', `/wiki_pages/${first.id}`)).status, 204);
      assert.equal((await call('PATCH', `/wiki_pages/${second.id}`, { title: 'Taken' })).status, 200);
      await refused(await call('PATCH', `/wiki_pages/${first.id}`, { title: 'Back' }), first.id, 409, 'wiki_page.deleted', 2);
      await refused(await call('DELETE', `/wiki_pages/${first.id}`), first.id, 409, 'wiki_page.deleted', 2);

      assert.equal((await call('DELETE', `/activities/${second.activity_id}`)).status, 204);
      await refused(await call('PATCH', `/wiki_pages/${second.id}`, { title: 'Orphan' }), second.id, 409, 'activity.deleted', 2);
      await refused(await call('DELETE', `/wiki_pages/${second.id}`), second.id, 409, 'activity.deleted', 2);
      assert.deepEqual(await tombstones(second.id), []);
      assert.deepEqual(await successEntries(second.id), [['updateWikiPage', 200]]);
    });

    test('a delete by the caller leaves its tombstone and an event quoting the title as the service does; the page is gone for reads', async () => {
      for (const title of NAMES) {
        const page = await t.make.wikiPage(caller.org, { title });
        await deleted('wiki_pages', page, 'wiki_page.deleted', pageEvent(page, `Wiki page ${quoted(title)} deleted.`), 'deleteWikiPage');
        const row = await t.database.db.selectFrom('wiki_pages').select(['deleted_at', 'updated_at', 'updated_by', 'version']).where('id', '=', page.id).executeTakeFirstOrThrow();
        assert.deepEqual({ ...row }, { deleted_at: row.updated_at, updated_at: row.updated_at, updated_by: caller.personId, version: 1 });
        assert.equal((await call('GET', `/wiki_pages/${page.id}`)).status, 404);
      }
    });
  });
  describe('POST /activities and POST /files: reads together, writes deferred', () => {
    test('a new activity is answered with the settings its type stored, as a read shows it; its event and audit entry', async () => {
      const section = await t.make.section(caller.org);
      for (const [type, settings, shown] of [['wiki', { mode: 'group' }, { mode: 'group' }], ['wiki', undefined, { mode: 'collaborative' }], ['lesson', undefined, {}]] as const) {
        const res = await call('POST', '/activities', { course_id: section.course_id, section_id: section.id, type, name: 'New "one"', ...(settings ? { settings } : {}) });
        assert.equal(res.status, 201, res.raw);
        assert.deepEqual(res.body.settings, shown);
        assert.deepEqual((await call('GET', `/activities/${res.body.id}`)).body, res.body);
        const events = await eventsOf(res.body.id);
        assert.deepEqual(events.map((e) => e.data), [JSON.stringify({ id: res.body.id, course_id: section.course_id, type, summary: `Activity ${type} ${quoted('New "one"')} added.` })]);
        assert.deepEqual(await successEntries(res.body.id), [['createActivity', 201]]);
      }
    });

    test('refusals read together keep their order and their answers; a taken external id is a 409 that leaves nothing', async () => {
      const course = await t.make.course(caller.org);
      const gone = await t.make.section(caller.org, { course_id: course.id });
      assert.equal((await call('DELETE', `/sections/${gone.id}`)).status, 204);
      const deleted = await call('POST', '/activities', { course_id: course.id, section_id: gone.id, type: 'wiki', name: 'x' });
      assert.equal(deleted.status, 422);
      assert.equal(deleted.body.errors[0].path, '/section_id');
      // An absent course is named first, whatever else is wrong.
      const absent = await call('POST', '/activities', { course_id: crypto.randomUUID(), section_id: crypto.randomUUID(), type: 'wiki', name: 'x' });
      assert.equal(absent.status, 422);
      assert.deepEqual(absent.body.errors.map((e: { path: string }) => e.path), ['/course_id']);
      const first = await call('POST', '/activities', { course_id: course.id, type: 'wiki', name: 'First', external_id: `act-${course.id}` });
      assert.equal(first.status, 201);
      const clash = await call('POST', '/activities', { course_id: course.id, type: 'wiki', name: 'Second', external_id: `act-${course.id}` });
      assert.equal(clash.status, 409);
      assert.equal(clash.body.code, 'resource.external_id_taken');
      const names = (await t.database.db.selectFrom('activities').select('name').where('course_id', '=', course.id).execute()).map((r) => r.name);
      assert.deepEqual(names, ['First']);
      const wikis = await t.database.db.selectFrom('wikis').innerJoin('activities', 'activities.id', 'wikis.activity_id').select('activities.name').where('activities.course_id', '=', course.id).execute();
      assert.deepEqual(wikis.map((w) => w.name), ['First']);
    });

    test('an upload is answered as a read shows it, with its event and audit entry', async () => {
      const res = await call('POST', '/files', { filename: 'notes.txt', content_type: 'text/plain', content_base64: Buffer.from('Some notes').toString('base64') });
      assert.equal(res.status, 201, res.raw);
      assert.deepEqual((await call('GET', `/files/${res.body.id}`)).body, res.body);
      assert.equal(res.body.size, 10);
      assert.deepEqual((await eventsOf(res.body.id)).map((e) => e.data), [JSON.stringify({ id: res.body.id, storage_target_id: 'deployment', summary: 'File "notes.txt" stored.' })]);
      assert.deepEqual(await successEntries(res.body.id), [['uploadFile', 201]]);
    });
  });
  describe('POST /lesson_pages: its lesson, question type switch and last sort key read together', () => {
    test('pages append after the last key, a deleted page\'s included; the answer is what a read shows', async () => {
      const lesson = await t.make.lesson(caller.org);
      const first = await call('POST', '/lesson_pages', { lesson_id: lesson.id, title: 'One' });
      assert.equal(first.status, 201, first.raw);
      assert.equal((await call('DELETE', `/lesson_pages/${first.body.id}`)).status, 204);
      const second = await call('POST', '/lesson_pages', { lesson_id: lesson.id, title: 'Two', page_type: 'truefalse', answers: [{ text: 'True', score: 1 }, { text: 'False' }] });
      assert.equal(second.status, 201, second.raw);
      assert.ok(second.body.sort_key > first.body.sort_key);
      assert.deepEqual((await call('GET', `/lesson_pages/${second.body.id}`)).body, second.body);
      assert.deepEqual((await eventsOf(second.body.id)).map((e) => e.data), [JSON.stringify({ id: second.body.id, lesson_id: lesson.id, course_id: lesson.course_id, summary: 'Lesson page "Two" added.' })]);
      assert.deepEqual(await successEntries(second.body.id), [['createLessonPage', 201]]);
    });

    test('refusals keep their order: the lesson first, then the question type switched off; nothing is written', async () => {
      const c = await t.make.caller();
      const lesson = await t.make.lesson(c.org);
      await t.app.services.extensions.setEnabled(t.database.db, c.org.id, 'qtype_truefalse', false);
      const post = (body: unknown) => t.api.request({ host: c.org.address, key: c.key, method: 'POST', path: '/lesson_pages', body });
      const question = { title: 'Q', page_type: 'truefalse', answers: [{ text: 'True', score: 1 }, { text: 'False' }] };
      const absent = await post({ lesson_id: crypto.randomUUID(), ...question });
      assert.equal(absent.status, 422);
      assert.deepEqual(absent.body.errors.map((e: { path: string }) => e.path), ['/lesson_id']);
      const wiki = await t.make.activity(c.org);
      const wrongType = await post({ lesson_id: wiki.id, ...question });
      assert.equal(wrongType.status, 422);
      assert.deepEqual(wrongType.body.errors.map((e: { path: string; code: string }) => [e.path, e.code]), [['/lesson_id', 'wrong_type']]);
      const off = await post({ lesson_id: lesson.id, ...question });
      assert.equal(off.status, 409);
      assert.equal(off.body.code, 'extension.disabled');
      assert.equal((await post({ lesson_id: lesson.id, title: 'Content is fine' })).status, 201);
      assert.equal((await t.api.request({ host: c.org.address, key: c.key, method: 'DELETE', path: `/activities/${lesson.id}` })).status, 204);
      const deleted = await post({ lesson_id: lesson.id, ...question });
      assert.equal(deleted.status, 409);
      assert.equal(deleted.body.code, 'activity.deleted');
      const titles = (await t.database.db.selectFrom('lesson_pages').select('title').where('lesson_id', '=', lesson.id).execute()).map((r) => r.title);
      assert.deepEqual(titles, ['Content is fine']);
    });
  });
  describe('POST /wiki_pages: activity and wiki read together, the subwiki made with the title check, the page deferred', () => {
    test('pages share the subwiki made on first use; each is answered as a read shows it, with version 1 and its event', async () => {
      const activity = await t.make.activity(caller.org);
      const made = [];
      for (const title of ['First', 'Second']) {
        const res = await call('POST', '/wiki_pages', { activity_id: activity.id, title, body: { text: title } });
        assert.equal(res.status, 201, res.raw);
        assert.equal(res.body.version, 1);
        assert.deepEqual((await call('GET', `/wiki_pages/${res.body.id}`)).body, res.body);
        const events = await eventsOf(res.body.id);
        assert.deepEqual(events.map((e) => e.data), [JSON.stringify({ id: res.body.id, activity_id: activity.id, course_id: activity.course_id, wiki_id: res.body.wiki_id, subwiki_id: res.body.subwiki_id, summary: `Wiki page ${quoted(title)} created.` })]);
        const versions = await t.database.db.selectFrom('wiki_page_versions').select(['version', 'title', 'created_by']).where('wiki_page_id', '=', res.body.id).execute();
        assert.deepEqual(versions.map((v) => ({ ...v })), [{ version: 1, title, created_by: caller.personId }]);
        assert.deepEqual(await successEntries(res.body.id), [['createWikiPage', 201]]);
        made.push(res.body);
      }
      assert.equal(made[0].subwiki_id, made[1].subwiki_id);
      const subwikis = await t.database.db.selectFrom('subwikis').select('id').where('wiki_id', '=', made[0].wiki_id).execute();
      assert.deepEqual(subwikis.map((r) => r.id), [made[0].subwiki_id]);
    });

    test('409 for a title a live page of the subwiki has and for a taken external id, 422 and 409 for the activity; nothing is written', async () => {
      const activity = await t.make.activity(caller.org);
      const first = await call('POST', '/wiki_pages', { activity_id: activity.id, title: 'Taken', body: null, external_id: `wp-${activity.id}` });
      assert.equal(first.status, 201);
      const taken = await call('POST', '/wiki_pages', { activity_id: activity.id, title: 'Taken', body: null });
      assert.equal(taken.status, 409);
      assert.equal(taken.body.code, 'wiki_page.title_taken');
      const clash = await call('POST', '/wiki_pages', { activity_id: activity.id, title: 'Other', body: null, external_id: `wp-${activity.id}` });
      assert.equal(clash.status, 409);
      assert.equal(clash.body.code, 'resource.external_id_taken');
      const absent = await call('POST', '/wiki_pages', { activity_id: crypto.randomUUID(), title: 'x', body: null });
      assert.equal(absent.status, 422);
      assert.deepEqual(absent.body.errors.map((e: { path: string; code: string }) => [e.path, e.code]), [['/activity_id', 'not_found']]);
      const lesson = await t.make.lesson(caller.org);
      const wrongType = await call('POST', '/wiki_pages', { activity_id: lesson.id, title: 'x', body: null });
      assert.equal(wrongType.status, 422);
      assert.deepEqual(wrongType.body.errors.map((e: { path: string; code: string }) => [e.path, e.code]), [['/activity_id', 'wrong_type']]);
      const pages = await t.database.db.selectFrom('wiki_pages').select('title').where('activity_id', '=', activity.id).execute();
      assert.deepEqual(pages.map((p) => p.title), ['Taken']);
      assert.equal((await t.database.db.selectFrom('wiki_page_versions').select('id').where('title', '=', 'Other').where('organisation_id', '=', caller.org.id).execute()).length, 0);
      assert.equal((await call('DELETE', `/activities/${activity.id}`)).status, 204);
      const deleted = await call('POST', '/wiki_pages', { activity_id: activity.id, title: 'Late', body: null });
      assert.equal(deleted.status, 409);
      assert.equal(deleted.body.code, 'activity.deleted');
    });
  });
  describe('with an Idempotency-Key: the full path, on both engines, answers and records alike', () => {
    const keyed = (method: ApiRequest['method'], path: string, body?: unknown) =>
      t.api.request({ host: caller.org.address, key: caller.key, method, path, headers: { 'idempotency-key': `content-${crypto.randomUUID()}` }, ...(body === undefined ? {} : { body }) });
    const lastSummary = async (id: string) => JSON.parse((await eventsOf(id)).at(-1)!.data).summary;

    test('email messages: a change (on a message read locked) and a delete that cancels the schedule', async () => {
      const message = await t.make.emailMessage(caller.org, { subject: 'Keyed', status: 'scheduled', send_at: new Date(t.clock.now().getTime() + 3_600_000).toISOString() });
      const res = await keyed('PATCH', `/email_messages/${message.id}`, { subject: 'Keyed again' });
      assert.equal(res.status, 200, res.raw);
      assert.deepEqual((await call('GET', `/email_messages/${message.id}`)).body, res.body);
      assert.equal(await lastSummary(message.id), 'Email message "Keyed again" changed: subject.');
      assert.equal((await keyed('DELETE', `/email_messages/${message.id}`)).status, 204);
      assert.equal(await lastSummary(message.id), 'Email message "Keyed again" deleted (its scheduled sending cancelled).');
      assert.equal((await call('GET', `/email_messages/${message.id}`)).body.status, 'cancelled');
      assert.deepEqual(await tombstones(message.id), [{ resource_type: 'email_message', external_id: message.external_id }]);
      const sending = await t.make.emailMessage(caller.org);
      await t.database.db.updateTable('email_messages').set({ status: 'sending' }).where('id', '=', sending.id).execute();
      assert.equal((await keyed('PATCH', `/email_messages/${sending.id}`, { subject: 'No' })).body.code, 'email_message.sending');
      assert.equal((await keyed('DELETE', `/email_messages/${sending.id}`)).body.code, 'email_message.sending');
    });

    test('lesson and wiki pages: a change and a delete, read with whether their activity is live', async () => {
      const page = await t.make.lessonPage(caller.org, { title: 'Keyed' });
      assert.equal((await keyed('PATCH', `/lesson_pages/${page.id}`, { title: 'Keyed again' })).status, 200);
      assert.equal(await lastSummary(page.id), 'Lesson page "Keyed again" changed: title.');
      assert.equal((await keyed('DELETE', `/lesson_pages/${page.id}`)).status, 204);
      assert.equal(await lastSummary(page.id), 'Lesson page "Keyed again" deleted.');
      const wiki = await t.make.wikiPage(caller.org, { title: 'Keyed' });
      const other = await t.make.wikiPage(caller.org, { activity_id: wiki.activity_id, title: 'Other' });
      assert.equal((await keyed('PATCH', `/wiki_pages/${wiki.id}`, { title: 'Other' })).body.code, 'wiki_page.title_taken');
      assert.equal((await keyed('PATCH', `/wiki_pages/${wiki.id}`, { title: 'Keyed again' })).body.version, 2);
      assert.equal(await lastSummary(wiki.id), 'Wiki page "Keyed again" edited (title): version 2.');
      assert.equal((await keyed('DELETE', `/wiki_pages/${wiki.id}`)).status, 204);
      assert.equal((await call('DELETE', `/activities/${other.activity_id}`)).status, 204);
      assert.equal((await keyed('PATCH', `/wiki_pages/${other.id}`, { title: 'Orphan' })).body.code, 'activity.deleted');
      assert.equal((await keyed('DELETE', `/wiki_pages/${other.id}`)).body.code, 'activity.deleted');
    });
  });
  describe('POST /email_messages/bulk in batch: what the operations name read up front, the writes made together', () => {
    test('each operation answers and records as it would alone, whatever the others did before it', async () => {
      const people = [(await t.make.person(caller.org)).id, (await t.make.person(caller.org)).id];
      const course = await t.make.course(caller.org);
      const goneCourse = await t.make.course(caller.org);
      assert.equal((await call('DELETE', `/courses/${goneCourse.id}`)).status, 204);
      const existing = await t.make.emailMessage(caller.org, { subject: 'Existing', person_ids: people });
      const sending = await t.make.emailMessage(caller.org, { subject: 'Sending', person_ids: people });
      await t.database.db.updateTable('email_messages').set({ status: 'sending' }).where('id', '=', sending.id).execute();
      const data = (subject: string, audience: unknown = { type: 'people', person_ids: people }) => ({ subject, body: { format: 'plain', content: 'Hello' }, audience });
      const res = await bulk('email_messages', {
        operations: [
          { ref: 'new', op: 'create', data: { ...data('New'), external_id: `new-${course.id}` } },
          { ref: 'course', op: 'upsert', external_id: `course-${course.id}`, data: data('To the course', { type: 'course', course_id: course.id }) },
          { ref: 'again', op: 'upsert', external_id: `new-${course.id}`, data: data('New, revised') },
          { ref: 'taken', op: 'create', data: { ...data('Taken'), external_id: existing.external_id } },
          { ref: 'existing', op: 'upsert', external_id: existing.external_id!, data: { ...data('Existing'), body: existing.body } },
          { ref: 'changed', op: 'upsert', external_id: existing.external_id!, data: data('Existing, changed') },
          { ref: 'sending', op: 'upsert', external_id: sending.external_id!, data: data('Too late') },
          { ref: 'nobody', op: 'create', data: data('Nobody', { type: 'people', person_ids: [people[0], crypto.randomUUID()] }) },
          { ref: 'gone', op: 'create', data: data('Gone', { type: 'course', course_id: goneCourse.id }) },
        ],
      });
      assert.equal(res.status, 200, res.raw);
      const results = res.body.results as Array<{ ref: string; status: number; data?: { id: string; subject: string }; error?: { code: string; detail: string } }>;
      assert.deepEqual(results.map((r) => `${r.ref} ${r.status}${r.error ? ` ${r.error.code}` : ''}`), [
        'new 201',
        'course 201',
        'again 200',
        'taken 409 resource.external_id_taken',
        'existing 200',
        'changed 200',
        'sending 409 email_message.sending',
        'nobody 422 validation.invalid_body',
        'gone 409 course.deleted',
      ]);
      assert.match(results[7].error!.detail, /\/operations\/7\/data\/audience\/person_ids\/1/);
      // What each message's last operation answered is what a read shows.
      const last = new Map(results.filter((r) => r.data).map((r) => [r.data!.id, r.data]));
      for (const [id, answered] of last) assert.deepEqual((await call('GET', `/email_messages/${id}`)).body, answered);
      assert.equal(results[2].data!.id, results[0].data!.id);
      assert.equal(results[4].data!.id, existing.id);
      assert.equal(results[5].data!.subject, 'Existing, changed');
      assert.deepEqual(
        (await eventsOf(results[0].data!.id)).map((e) => JSON.parse(e.data).summary),
        ['Email message "New" created as a draft.', 'Email message "New, revised" changed: subject.'],
      );
      assert.deepEqual((await eventsOf(existing.id)).slice(1).map((e) => JSON.parse(e.data).summary), ['Email message "Existing, changed" changed: subject, body.']);
      assert.deepEqual((await eventsOf(sending.id)).length, 1);
      const subjects = (await t.database.db.selectFrom('email_messages').select('subject').where('organisation_id', '=', caller.org.id).where('subject', 'in', ['Taken', 'Nobody', 'Gone', 'Too late']).execute()).map((r) => r.subject);
      assert.deepEqual(subjects, []);
    });
  });
  describe('POST /lesson_pages/bulk: the lessons its operations name read up front', () => {
    test('each create answers as it would alone: appended after the last key, a deleted page\'s included; refused for a lesson that is none, another type or deleted', async () => {
      const lesson = await t.make.lesson(caller.org);
      const old = await t.make.lessonPage(caller.org, { lesson_id: lesson.id });
      assert.equal((await call('DELETE', `/lesson_pages/${old.id}`)).status, 204);
      const gone = await t.make.lesson(caller.org);
      assert.equal((await call('DELETE', `/activities/${gone.id}`)).status, 204);
      const wiki = await t.make.activity(caller.org);
      const create = (ref: string, lessonId: string) => ({ ref, op: 'create', data: { lesson_id: lessonId, title: ref } });
      const res = await bulk('lesson_pages', { operations: [create('one', lesson.id), create('gone', gone.id), create('wiki', wiki.id), create('absent', crypto.randomUUID()), create('two', lesson.id)] });
      assert.equal(res.status, 200, res.raw);
      const results = res.body.results as Array<{ ref: string; status: number; data?: { id: string; sort_key: string }; error?: { code: string; detail: string } }>;
      assert.deepEqual(results.map((r) => [r.ref, r.status, r.error?.code ?? null]), [
        ['one', 201, null],
        ['gone', 409, 'activity.deleted'],
        ['wiki', 422, 'validation.invalid_body'],
        ['absent', 422, 'validation.invalid_body'],
        ['two', 201, null],
      ]);
      assert.match(results[2].error!.detail, /is a wiki, not a lesson/);
      assert.match(results[3].error!.detail, /No activity/);
      assert.ok(old.sort_key < results[0].data!.sort_key && results[0].data!.sort_key < results[4].data!.sort_key);
      for (const r of [results[0], results[4]]) assert.deepEqual((await call('GET', `/lesson_pages/${r.data!.id}`)).body, r.data);
    });
  });
});
