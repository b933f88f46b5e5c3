// Email messages through the API: fields, the status life cycle and its 409s, bad input (422, nothing
// changed), lists, recipients, external ids. Sending itself is in email-messages.sending.test.ts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, manualClock, type TestContext } from '../../../test/support/harness.ts';
import type { Caller } from '../../../test/support/factories.ts';
import { recipientId } from './email-messages.repository.ts';

const UNKNOWN = '01a1ffb1-ef6f-770b-ba7c-b487911c9252';
const HOUR = 3_600_000;

describe('email messages', () => {
  const clock = manualClock(new Date('2026-11-02T08:00:00.000Z'));
  let t: TestContext;
  let c: Caller;
  before(async () => {
    t = await startTestApp({ clock });
    c = await t.make.caller();
  });
  after(() => t.close());

  const call = (method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', path: string, body?: unknown) => t.api.request({ host: c.org.address, key: c.key, method, path, body });
  const inHours = (h: number) => new Date(clock.now().getTime() + h * HOUR).toISOString();
  const twoPeople = async () => [(await t.make.person(c.org)).id, (await t.make.person(c.org)).id];
  const draftBody = async (extra: Record<string, unknown> = {}) => ({
    subject: 'Week 2 starts on Monday',
    body: { format: 'markdown', content: 'Read *chapter 3*.' },
    audience: { type: 'people', person_ids: await twoPeople() },
    ...extra,
  });
  const create = async (extra: Record<string, unknown> = {}) => {
    const res = await call('POST', '/email_messages', await draftBody(extra));
    assert.equal(res.status, 201, res.raw);
    return res.body;
  };
  const messageCount = async () => Number((await t.database.db.selectFrom('email_messages').select((eb) => eb.fn.countAll().as('n')).where('organisation_id', '=', c.org.id).executeTakeFirstOrThrow()).n);
  const eventsOf = async (id: string) =>
    (await t.database.db.selectFrom('outbox_events').selectAll().where('organisation_id', '=', c.org.id).orderBy('id').execute()).filter((e) => JSON.parse(e.data).id === id);

  /** Sends everything due (through the mail log: no SMTP_URL here) once the clock reaches `at`. */
  async function sendDue(at: string) {
    clock.set(new Date(at));
    return t.app.services.emailMessages.runDueMessages();
  }

  /**
   * A message caught while `sending`: its worker's transport never answers, as when a worker hangs mid-way.
   * (The clock is moved back afterwards, so later messages can still be scheduled.)
   */
  async function sendingMessage() {
    const m = await create({ status: 'scheduled', send_at: inHours(1) });
    const mail = t.app.services.mail;
    const original = mail.send;
    // The transport is put back only once the pass is stuck in it: put back any earlier, the pass would finish
    // this message and go on to claim the next test's messages, racing that test's own pass.
    const { promise: stuck, resolve: nowStuck } = Promise.withResolvers<void>();
    mail.send = () => {
      nowStuck();
      return new Promise<void>(() => {});
    };
    const before = clock.now();
    try {
      void sendDue(inHours(1));
      await stuck;
      assert.equal((await call('GET', `/email_messages/${m.id}`)).body.status, 'sending');
    } finally {
      mail.send = original;
      clock.set(before);
    }
    return m;
  }

  async function sentMessage() {
    const m = await create({ status: 'scheduled', send_at: inHours(1) });
    const before = clock.now();
    const pass = await sendDue(inHours(1));
    clock.set(before);
    assert.ok(pass.sent.includes(m.id));
    return (await call('GET', `/email_messages/${m.id}`)).body;
  }

  describe('POST /email_messages', () => {
    test('201: a draft, with every field; its recipients are not counted before sending starts', async () => {
      const body = await draftBody({ external_id: 'campaign-1' });
      const res = await call('POST', '/email_messages', body);
      assert.equal(res.status, 201);
      const { id, ...rest } = res.body;
      assert.deepEqual(rest, {
        external_id: 'campaign-1',
        subject: 'Week 2 starts on Monday',
        body: { format: 'markdown', content: 'Read *chapter 3*.' },
        audience: body.audience,
        send_at: null,
        status: 'draft',
        sent_at: null,
        recipient_counts: null,
        created_by: c.personId,
        created_at: clock.now().toISOString(),
        updated_at: clock.now().toISOString(),
        deleted_at: null,
      });
      assert.deepEqual((await call('GET', `/email_messages/${id}`)).body, res.body);
      const events = await eventsOf(id);
      assert.deepEqual(events.map((e) => e.type), ['email_message.created']);
      assert.match(JSON.parse(events[0].data).summary, /created as a draft/);
    });

    test('201: scheduled for a time given with an offset, stored and answered in UTC', async () => {
      const res = await call('POST', '/email_messages', await draftBody({ status: 'scheduled', send_at: '2026-11-02T10:30:00+01:00' }));
      assert.equal(res.status, 201);
      assert.equal(res.body.status, 'scheduled');
      assert.equal(res.body.send_at, '2026-11-02T09:30:00.000Z');
    });

    test('201: a course audience, with or without roles; a draft may carry any planned send_at', async () => {
      const course = await t.make.course(c.org);
      const res = await call('POST', '/email_messages', await draftBody({ audience: { type: 'course', course_id: course.id, roles: ['student', 'teacher'] }, send_at: '2020-01-01T00:00:00Z' }));
      assert.equal(res.status, 201);
      assert.deepEqual(res.body.audience, { type: 'course', course_id: course.id, roles: ['student', 'teacher'] });
      assert.equal(res.body.send_at, '2020-01-01T00:00:00.000Z');
    });

    test('422 naming the field, and nothing created, for bad input', async () => {
      const course = await t.make.course(c.org);
      const stranger = await t.make.person(await t.make.org());
      const [a, b] = await twoPeople();
      const cases: Array<[Record<string, unknown>, string, string?]> = [
        [{ subject: '' }, '/subject', 'too_short'],
        [{ subject: '   ' }, '/subject', 'invalid_format'],
        [{ subject: 'x'.repeat(256) }, '/subject', 'too_long'],
        [{ subject: undefined }, '/subject', 'required'],
        [{ body: { format: 'rtf', content: 'x' } }, '/body/format'],
        [{ body: { format: 'plain', content: '' } }, '/body/content', 'too_short'],
        [{ body: 'Hello' }, '/body', 'invalid_type'],
        [{ audience: undefined }, '/audience', 'required'],
        [{ audience: { type: 'everyone' } }, '/audience/type'],
        [{ audience: { type: 'people' } }, '/audience/person_ids', 'required'],
        [{ audience: { type: 'people', person_ids: [] } }, '/audience/person_ids', 'too_few_items'],
        [{ audience: { type: 'people', person_ids: [a, a] } }, '/audience/person_ids', 'duplicate_items'],
        [{ audience: { type: 'people', person_ids: [a, 'not-a-uuid'] } }, '/audience/person_ids/1', 'invalid_format'],
        [{ audience: { type: 'people', person_ids: [a, b, stranger.id] } }, '/audience/person_ids/2', 'not_found'],
        [{ audience: { type: 'people', person_ids: [a], course_id: course.id } }, '/audience/course_id', 'not_applicable'],
        [{ audience: { type: 'course' } }, '/audience/course_id', 'required'],
        [{ audience: { type: 'course', course_id: UNKNOWN } }, '/audience/course_id', 'not_found'],
        [{ audience: { type: 'course', course_id: course.id, person_ids: [a] } }, '/audience/person_ids', 'not_applicable'],
        [{ audience: { type: 'course', course_id: course.id, roles: ['owner'] } }, '/audience/roles/0'],
        [{ status: 'sent' }, '/status'],
        [{ status: 'sending' }, '/status'],
        [{ status: 'cancelled' }, '/status', 'invalid_value'],
        [{ status: 'scheduled' }, '/send_at', 'required'],
        [{ status: 'scheduled', send_at: null }, '/send_at', 'required'],
        [{ status: 'scheduled', send_at: new Date(clock.now().getTime() - 2 * 60_000).toISOString() }, '/send_at', 'in_the_past'],
        [{ send_at: 'next monday' }, '/send_at', 'invalid_format'],
        [{ external_id: '' }, '/external_id', 'too_short'],
        [{ priority: 'high' }, '/priority', 'unknown_field'],
      ];
      const before = await messageCount();
      for (const [change, pointer, code] of cases) {
        const res = await call('POST', '/email_messages', { ...(await draftBody()), ...change });
        assert.equal(res.status, 422, `${JSON.stringify(change)} → ${res.raw}`);
        assert.equal(res.body.code, 'validation.invalid_body');
        assert.equal(res.body.errors[0].path, pointer, JSON.stringify(change));
        if (code) assert.equal(res.body.errors[0].code, code, JSON.stringify(change));
      }
      assert.equal(await messageCount(), before);
    });

    test('a send_at just now (within a minute) may still be scheduled', async () => {
      const res = await call('POST', '/email_messages', await draftBody({ status: 'scheduled', send_at: new Date(clock.now().getTime() - 30_000).toISOString() }));
      assert.equal(res.status, 201);
    });

    test('409 for a taken external_id or a deleted course; nothing created', async () => {
      await create({ external_id: 'taken' });
      const course = await t.make.course(c.org);
      await t.app.services.courses.deleteCourse(t.database.db, c.org.id, course.id);
      const before = await messageCount();
      const taken = await call('POST', '/email_messages', await draftBody({ external_id: 'taken' }));
      assert.equal(taken.status, 409);
      assert.equal(taken.body.code, 'resource.external_id_taken');
      const deleted = await call('POST', '/email_messages', await draftBody({ audience: { type: 'course', course_id: course.id } }));
      assert.equal(deleted.status, 409);
      assert.equal(deleted.body.code, 'course.deleted');
      assert.equal(await messageCount(), before);
    });
  });

  describe('PATCH /email_messages/{id}: content and the status life cycle', () => {
    test('draft → scheduled → draft → scheduled → cancelled, one event each, with what happened', async () => {
      const m = await create();
      const sendAt = inHours(2);
      clock.advance(1000);
      const scheduled = await call('PATCH', `/email_messages/${m.id}`, { status: 'scheduled', send_at: sendAt });
      assert.equal(scheduled.status, 200);
      assert.deepEqual([scheduled.body.status, scheduled.body.send_at, scheduled.body.updated_at], ['scheduled', sendAt, clock.now().toISOString()]);
      const unscheduled = await call('PATCH', `/email_messages/${m.id}`, { status: 'draft' });
      assert.deepEqual([unscheduled.status, unscheduled.body.status, unscheduled.body.send_at], [200, 'draft', sendAt]);
      assert.equal((await call('PATCH', `/email_messages/${m.id}`, { status: 'scheduled' })).body.status, 'scheduled');
      const cancelled = await call('PATCH', `/email_messages/${m.id}`, { status: 'cancelled' });
      assert.deepEqual([cancelled.status, cancelled.body.status], [200, 'cancelled']);
      const summaries = (await eventsOf(m.id)).map((e) => [e.type, JSON.parse(e.data).summary]);
      assert.deepEqual(
        summaries.map(([type]) => type),
        ['email_message.created', 'email_message.updated', 'email_message.updated', 'email_message.updated', 'email_message.updated'],
      );
      assert.match(summaries[1][1], /scheduled for/);
      assert.match(summaries[2][1], /unscheduled/);
      assert.match(summaries[4][1], /cancelled/);
    });

    test('a draft can be cancelled; a scheduled message can be edited and rescheduled', async () => {
      const draft = await create();
      assert.equal((await call('PATCH', `/email_messages/${draft.id}`, { status: 'cancelled' })).body.status, 'cancelled');
      const m = await create({ status: 'scheduled', send_at: inHours(1) });
      const [p] = await twoPeople();
      const res = await call('PATCH', `/email_messages/${m.id}`, { subject: 'Changed', body: { format: 'html', content: '<p>New</p>' }, audience: { type: 'people', person_ids: [p] }, send_at: inHours(3) });
      assert.equal(res.status, 200);
      assert.deepEqual([res.body.status, res.body.subject, res.body.body, res.body.audience, res.body.send_at], ['scheduled', 'Changed', { format: 'html', content: '<p>New</p>' }, { type: 'people', person_ids: [p] }, inHours(3)]);
      assert.match(JSON.parse((await eventsOf(m.id)).at(-1)!.data).summary, /changed: subject, body, audience, send_at/);
    });

    test('a PATCH that changes nothing is a 200 without an event, whatever the state', async () => {
      const m = await create();
      const same = await call('PATCH', `/email_messages/${m.id}`, { subject: m.subject, body: m.body, audience: m.audience, status: 'draft' });
      assert.equal(same.status, 200);
      assert.deepEqual(same.body, m);
      const sent = await sentMessage();
      const again = await call('PATCH', `/email_messages/${sent.id}`, { subject: sent.subject, status: undefined });
      assert.equal(again.status, 200);
      assert.equal((await eventsOf(m.id)).length, 1);
    });

    test('409 for any change to a sent, cancelled, sending or deleted message; nothing changes', async () => {
      const sent = await sentMessage();
      const cancelled = await create();
      await call('PATCH', `/email_messages/${cancelled.id}`, { status: 'cancelled' });
      const deleted = await create();
      await call('DELETE', `/email_messages/${deleted.id}`);
      const sending = await sendingMessage();
      const cases: Array<[string, string, Record<string, unknown>]> = [
        [sent.id, 'email_message.sent', { subject: 'Again' }],
        [sent.id, 'email_message.sent', { status: 'draft' }],
        [cancelled.id, 'email_message.cancelled', { status: 'scheduled', send_at: inHours(1) }],
        [cancelled.id, 'email_message.cancelled', { subject: 'Revived' }],
        [deleted.id, 'email_message.deleted', { subject: 'Ghost' }],
        [sending.id, 'email_message.sending', { status: 'cancelled' }],
        [sending.id, 'email_message.sending', { subject: 'Too late' }],
      ];
      for (const [id, code, patch] of cases) {
        const before = (await call('GET', `/email_messages/${id}`)).body;
        const res = await call('PATCH', `/email_messages/${id}`, patch);
        assert.equal(res.status, 409, `${code} ${JSON.stringify(patch)}`);
        assert.equal(res.body.code, code);
        assert.deepEqual((await call('GET', `/email_messages/${id}`)).body, before);
      }
    });

    test('422 naming the field, and nothing changed, for bad input', async () => {
      const m = await create();
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ status: 'scheduled' }, '/send_at'],
        [{ status: 'scheduled', send_at: '2026-01-01T00:00:00Z' }, '/send_at'],
        [{ status: 'sent' }, '/status'],
        [{ subject: '' }, '/subject'],
        [{ audience: { type: 'people', person_ids: [UNKNOWN] } }, '/audience/person_ids/0'],
        [{ audience: { type: 'course' } }, '/audience/course_id'],
        [{ external_id: 'x' }, '/external_id'],
        [{ send_at: '0000-01-01T00:00:00Z' }, '/send_at'],
      ];
      for (const [patch, pointer] of cases) {
        const res = await call('PATCH', `/email_messages/${m.id}`, patch);
        assert.equal(res.status, 422, JSON.stringify(patch));
        assert.equal(res.body.errors[0].path, pointer, JSON.stringify(patch));
      }
      const scheduled = await create({ status: 'scheduled', send_at: inHours(1) });
      const unplanned = await call('PATCH', `/email_messages/${scheduled.id}`, { send_at: null });
      assert.equal(unplanned.status, 422);
      assert.equal(unplanned.body.errors[0].path, '/send_at');
      assert.deepEqual((await call('GET', `/email_messages/${m.id}`)).body, m);
      assert.deepEqual((await call('GET', `/email_messages/${scheduled.id}`)).body, scheduled);
    });

    test('404 for an unknown or malformed id', async () => {
      for (const id of [UNKNOWN, 'nope']) {
        for (const res of [await call('PATCH', `/email_messages/${id}`, { subject: 'x' }), await call('GET', `/email_messages/${id}`), await call('DELETE', `/email_messages/${id}`)]) {
          assert.equal(res.status, 404);
          assert.equal(res.body.code, 'email_message.not_found');
        }
      }
    });
  });

  describe('DELETE /email_messages/{id}', () => {
    test('204: soft delete; readable with deleted_at, out of lists, a tombstone; a second delete is a 409', async () => {
      const m = await create({ external_id: `del-${Math.random()}` });
      const res = await call('DELETE', `/email_messages/${m.id}`);
      assert.equal(res.status, 204);
      assert.equal(res.raw, '');
      const read = (await call('GET', `/email_messages/${m.id}`)).body;
      assert.equal(read.deleted_at, clock.now().toISOString());
      assert.equal(read.status, 'draft');
      assert.ok(!(await call('GET', '/email_messages?limit=200')).body.data.some((x: { id: string }) => x.id === m.id));
      assert.ok((await call('GET', '/email_messages?limit=200&include_deleted=true')).body.data.some((x: { id: string }) => x.id === m.id));
      assert.deepEqual((await call('GET', '/email_messages/deletions?limit=200')).body.data.find((d: { id: string }) => d.id === m.id), { id: m.id, external_id: m.external_id, deleted_at: read.deleted_at });
      const again = await call('DELETE', `/email_messages/${m.id}`);
      assert.equal(again.status, 409);
      assert.equal(again.body.code, 'email_message.deleted');
    });

    test('deleting a scheduled message cancels it: it is never sent', async () => {
      const m = await create({ status: 'scheduled', send_at: inHours(1) });
      assert.equal((await call('DELETE', `/email_messages/${m.id}`)).status, 204);
      assert.equal((await call('GET', `/email_messages/${m.id}`)).body.status, 'cancelled');
      const before = clock.now();
      const pass = await sendDue(inHours(2));
      clock.set(before);
      assert.ok(!pass.sent.includes(m.id));
      assert.equal((await call('GET', `/email_messages/${m.id}`)).body.sent_at, null);
    });

    test('409 while it is being sent; a sent message can be deleted and keeps its recipients', async () => {
      const sending = await sendingMessage();
      const refused = await call('DELETE', `/email_messages/${sending.id}`);
      assert.equal(refused.status, 409);
      assert.equal(refused.body.code, 'email_message.sending');
      assert.equal((await call('GET', `/email_messages/${sending.id}`)).body.deleted_at, null);
      const sent = await sentMessage();
      assert.equal((await call('DELETE', `/email_messages/${sent.id}`)).status, 204);
      const recipients = await call('GET', `/email_messages/${sent.id}/recipients`);
      assert.deepEqual(recipients.body.data.map((r: { outcome: string }) => r.outcome), ['sent', 'sent']);
    });
  });

  describe('GET /email_messages', () => {
    test('filters by status, pages, and follows changes with updated_since', async () => {
      const own = await t.make.caller();
      const as = (path: string) => t.api.request({ host: own.org.address, key: own.key, path });
      const draft = await t.make.emailMessage(own.org);
      const scheduled = await t.make.emailMessage(own.org, { status: 'scheduled', send_at: inHours(5) });
      const mark = clock.now().toISOString();
      clock.advance(1000);
      await t.app.services.emailMessages.update(t.database.db, own.org.id, own.personId, draft.id, { subject: 'Later' });
      assert.deepEqual((await as('/email_messages?status=draft')).body.data.map((m: { id: string }) => m.id), [draft.id]);
      assert.deepEqual((await as('/email_messages?status=scheduled')).body.data.map((m: { id: string }) => m.id), [scheduled.id]);
      assert.deepEqual((await as('/email_messages?status=sent')).body.data, []);
      const first = await as('/email_messages?limit=1');
      assert.deepEqual([first.body.data[0].id, first.body.page.has_more], [draft.id, true]);
      const changed = await as(`/email_messages?updated_since=${encodeURIComponent(mark)}`);
      assert.deepEqual(changed.body.data.map((m: { subject: string }) => m.subject), ['Later']);
      const bad = await as('/email_messages?status=bounced');
      assert.equal(bad.status, 422);
      assert.match(bad.body.detail, /`status`/);
    });
  });

  describe('GET /email_messages/{id}/recipients', () => {
    test('before sending: whom the audience resolves to now, all pending, with the ids they will keep', async () => {
      const people = await twoPeople();
      const m = await create({ audience: { type: 'people', person_ids: people } });
      const res = await call('GET', `/email_messages/${m.id}/recipients`);
      assert.equal(res.status, 200);
      const sorted = [...people].sort();
      assert.deepEqual(
        res.body.data.map((r: { id: string; person_id: string; outcome: string; error: null; sent_at: null }) => [r.id, r.person_id, r.outcome, r.error, r.sent_at]),
        sorted.map((p) => [recipientId(m.id, p), p, 'pending', null, null]),
      );
      assert.match(res.body.data[0].address, /@example\.test$/);
      assert.deepEqual((await call('GET', `/email_messages/${m.id}/recipients?outcome=sent`)).body.data, []);
    });

    test("a course's participants: active enrolments through live methods, filtered by role, each person once", async () => {
      const course = await t.make.course(c.org);
      const svc = t.app.services.enrolmentMethods;
      const students = await svc.create(t.database.db, c.org.id, { course_id: course.id, type: 'manual', role: 'student' });
      const teachers = await svc.create(t.database.db, c.org.id, { course_id: course.id, type: 'manual', role: 'teacher' });
      const gone = await svc.create(t.database.db, c.org.id, { course_id: course.id, type: 'manual', role: 'student' });
      const [ada, bob, cy, dee] = [await t.make.person(c.org), await t.make.person(c.org), await t.make.person(c.org), await t.make.person(c.org)];
      await svc.enrol(t.database.db, c.org.id, students.id, ada.id);
      await svc.enrol(t.database.db, c.org.id, teachers.id, ada.id); // twice enrolled: mailed once
      await svc.enrol(t.database.db, c.org.id, teachers.id, bob.id);
      await svc.enrol(t.database.db, c.org.id, gone.id, cy.id);
      await svc.remove(t.database.db, c.org.id, gone.id, { unenrol: true }); // cy's enrolment ended
      const other = await t.make.course(c.org);
      await svc.enrol(t.database.db, c.org.id, (await svc.create(t.database.db, c.org.id, { course_id: other.id, type: 'manual' })).id, dee.id);

      const everyone = await create({ audience: { type: 'course', course_id: course.id } });
      const ids = async (m: { id: string }) => (await call('GET', `/email_messages/${m.id}/recipients`)).body.data.map((r: { person_id: string }) => r.person_id);
      assert.deepEqual(await ids(everyone), [ada.id, bob.id].sort());
      const onlyStudents = await create({ audience: { type: 'course', course_id: course.id, roles: ['student'] } });
      assert.deepEqual(await ids(onlyStudents), [ada.id]);
    });

    test('after sending: each recipient with its outcome; 404 for an unknown message; 422 for a bad outcome', async () => {
      const sent = await sentMessage();
      const res = await call('GET', `/email_messages/${sent.id}/recipients?outcome=sent&limit=1`);
      assert.equal(res.status, 200);
      assert.equal(res.body.data[0].outcome, 'sent');
      assert.equal(res.body.data[0].sent_at, sent.sent_at);
      assert.equal(res.body.page.has_more, true);
      const next = await call('GET', `/email_messages/${sent.id}/recipients?outcome=sent&limit=1&cursor=${encodeURIComponent(res.body.page.next_cursor)}`);
      assert.notEqual(next.body.data[0].id, res.body.data[0].id);
      assert.deepEqual((await call('GET', `/email_messages/${sent.id}/recipients?outcome=failed`)).body.data, []);
      const unknown = await call('GET', `/email_messages/${UNKNOWN}/recipients`);
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.code, 'email_message.not_found');
      const bad = await call('GET', `/email_messages/${sent.id}/recipients?outcome=bounced`);
      assert.equal(bad.status, 422);
      assert.match(bad.body.detail, /`outcome`/);
    });
  });

  describe('external ids', () => {
    test('PUT creates (201), then updates (200); a sent message takes its own values again (200) but no change (409)', async () => {
      const ext = `ext-${Math.random()}`;
      const data = await draftBody({ status: 'scheduled', send_at: inHours(1) });
      const created = await call('PUT', `/email_messages/ext:${ext}`, data);
      assert.equal(created.status, 201);
      assert.equal(created.body.external_id, ext);
      const updated = await call('PUT', `/email_messages/ext:${ext}`, { ...data, subject: 'Renamed' });
      assert.deepEqual([updated.status, updated.body.id, updated.body.subject, updated.body.status], [200, created.body.id, 'Renamed', 'scheduled']);
      assert.deepEqual((await call('GET', `/email_messages/ext:${ext}`)).body, updated.body);
      const before = clock.now();
      await sendDue(inHours(1));
      clock.set(before);
      const { status: _status, ...values } = data as Record<string, unknown>;
      const replay = await call('PUT', `/email_messages/ext:${ext}`, { ...values, subject: 'Renamed' });
      assert.deepEqual([replay.status, replay.body.status], [200, 'sent']);
      for (const change of [{ ...values, subject: 'Too late' }, { ...values, subject: 'Renamed', status: 'scheduled' }]) {
        const res = await call('PUT', `/email_messages/ext:${ext}`, change);
        assert.equal(res.status, 409);
        assert.equal(res.body.code, 'email_message.sent');
      }
      const missing = await call('GET', '/email_messages/ext:nothing-here');
      assert.equal(missing.status, 404);
      assert.equal(missing.body.code, 'email_message.not_found');
    });
  });
});
