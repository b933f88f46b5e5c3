// Really sending email messages: the worker's pass (runDueMessages) against a real SMTP server started here,
// with the injected clock deciding when a message is due. Once per recipient, each outcome recorded, and a
// crash or a second worker never makes anyone get a mail twice.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { buildApp } from '../../app.ts';
import { backgroundJobs } from '../../jobs/jobs.ts';
import { startWorker } from '../../jobs/worker.ts';
import { MailUnavailable } from '../../mail/mail.ts';
import { startTestApp, manualClock, type TestContext } from '../../../test/support/harness.ts';
import type { Caller } from '../../../test/support/factories.ts';
import { startSmtpServer, type TestSmtpServer } from '../../../test/support/smtp-server.ts';
import { until } from '../../../test/support/wait.ts';
import { CLAIM_LEASE_MS, IN_DOUBT_ERROR } from './email-messages.sender.ts';

const MINUTE = 60_000;

describe('sending email messages over SMTP', () => {
  const clock = manualClock(new Date('2026-11-03T07:00:00.000Z'));
  let smtp: TestSmtpServer;
  let t: TestContext;
  let c: Caller;
  before(async () => {
    smtp = await startSmtpServer();
    t = await startTestApp({ clock, env: { SMTP_URL: smtp.url, MAIL_FROM: 'Example School <news@school.test>' } });
    c = await t.make.caller();
  });
  after(async () => {
    await t.close();
    await smtp.close();
  });

  const call = (method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown) => t.api.request({ host: c.org.address, key: c.key, method, path, body });
  const people = async (n: number) => {
    const made = [];
    for (let i = 0; i < n; i++) made.push(await t.make.person(c.org, { email: `p${i}-${Math.random().toString(36).slice(2, 8)}@school.test` }));
    return made;
  };
  const emailOf = async (personId: string) => (await t.database.db.selectFrom('people').select('email').where('id', '=', personId).executeTakeFirstOrThrow()).email;
  /** A message scheduled `minutes` from now, to `personIds`, with a subject no other test uses. */
  async function schedule(personIds: string[], minutes = 10, body: { format: string; content: string } = { format: 'plain', content: 'See you on Monday.' }) {
    const subject = `Campaign ${Math.random().toString(36).slice(2)}`;
    const res = await call('POST', '/email_messages', { subject, body, audience: { type: 'people', person_ids: personIds }, status: 'scheduled', send_at: new Date(clock.now().getTime() + minutes * MINUTE).toISOString() });
    assert.equal(res.status, 201, res.raw);
    return res.body as { id: string; subject: string; send_at: string };
  }
  const receivedFor = (subject: string) => smtp.received.filter((m) => m.subject === subject);
  const sentEvents = async (id: string) =>
    (await t.database.db.selectFrom('outbox_events').selectAll().where('type', '=', 'email_message.sent').execute()).filter((e) => JSON.parse(e.data).id === id);
  const recipients = async (id: string) => (await call('GET', `/email_messages/${id}/recipients?limit=200`)).body.data as Array<{ person_id: string; address: string; outcome: string; error: string | null; sent_at: string | null }>;

  test('a scheduled message is sent when its time comes, once to each recipient, and recorded', async () => {
    const to = await people(3);
    const m = await schedule(to.map((p) => p.id), 10, { format: 'markdown', content: 'Week 2 opens on *Monday*.' });

    clock.advance(9 * MINUTE);
    const early = await t.app.services.emailMessages.runDueMessages();
    assert.deepEqual(early.sent, []);
    assert.equal(receivedFor(m.subject).length, 0);
    assert.equal((await call('GET', `/email_messages/${m.id}`)).body.status, 'scheduled');

    clock.advance(MINUTE);
    const pass = await t.app.services.emailMessages.runDueMessages();
    assert.deepEqual(pass.sent, [m.id]);
    const mails = receivedFor(m.subject);
    assert.deepEqual(mails.map((x) => x.to).flat().sort(), (await Promise.all(to.map((p) => emailOf(p.id)))).sort());
    assert.ok(mails.every((x) => x.to.length === 1), 'one mail per recipient');
    assert.ok(mails.every((x) => x.from === 'news@school.test' && /^From: Example School <news@school\.test>/m.test(x.raw)));
    assert.ok(mails.every((x) => /Content-Type: text\/plain/i.test(x.raw) && /Week 2 opens on \*Monday\*\./.test(x.raw)), 'Markdown goes as plain text');

    const read = (await call('GET', `/email_messages/${m.id}`)).body;
    assert.deepEqual([read.status, read.sent_at, read.recipient_counts], ['sent', clock.now().toISOString(), { total: 3, sent: 3, failed: 0 }]);
    const recorded = await recipients(m.id);
    assert.deepEqual(recorded.map((r) => [r.outcome, r.error, r.sent_at]), Array(3).fill(['sent', null, clock.now().toISOString()]));
    const events = await sentEvents(m.id);
    assert.equal(events.length, 1);
    assert.match(JSON.parse(events[0].data).summary, /sent to 3 of 3 recipient\(s\)\.$/);

    const again = await t.app.services.emailMessages.runDueMessages();
    assert.deepEqual(again.sent, []);
    assert.equal(receivedFor(m.subject).length, 3, 'a second pass sends nothing more');
  });

  test('an HTML body is sent as HTML', async () => {
    const [p] = await people(1);
    const m = await schedule([p.id], 1, { format: 'html', content: '<p>Week <strong>2</strong></p>' });
    clock.advance(MINUTE);
    await t.app.services.emailMessages.runDueMessages();
    const [mail] = receivedFor(m.subject);
    assert.match(mail.raw, /Content-Type: text\/html/i);
    assert.match(mail.raw, /<p>Week <strong>2<\/strong><\/p>/);
  });

  test('a recipient the server refuses is recorded as failed with its answer; the others are sent', async () => {
    const to = await people(3);
    smtp.reject.add(await emailOf(to[1].id));
    const m = await schedule(to.map((p) => p.id));
    clock.advance(10 * MINUTE);
    await t.app.services.emailMessages.runDueMessages();
    const byPerson = new Map((await recipients(m.id)).map((r) => [r.person_id, r]));
    assert.deepEqual([byPerson.get(to[0].id)!.outcome, byPerson.get(to[2].id)!.outcome], ['sent', 'sent']);
    const refused = byPerson.get(to[1].id)!;
    assert.equal(refused.outcome, 'failed');
    assert.match(refused.error!, /^550 .*No such user here/);
    assert.equal(refused.sent_at, null);
    assert.deepEqual((await call('GET', `/email_messages/${m.id}/recipients?outcome=failed`)).body.data.map((r: { person_id: string }) => r.person_id), [to[1].id]);
    const read = (await call('GET', `/email_messages/${m.id}`)).body;
    assert.deepEqual([read.status, read.recipient_counts], ['sent', { total: 3, sent: 2, failed: 1 }]);
    assert.equal(receivedFor(m.subject).length, 2);
    assert.match(JSON.parse((await sentEvents(m.id))[0].data).summary, /sent to 2 of 3 recipient\(s\), 1 failed\./);
  });

  test('workers running at once (two processes, several passes each) send each mail exactly once', async () => {
    const to = await people(6);
    const messages = [await schedule(to.slice(0, 3).map((p) => p.id)), await schedule(to.slice(3).map((p) => p.id)), await schedule(to.map((p) => p.id))];
    clock.advance(10 * MINUTE);
    // A second worker process: its own services and SMTP pool over the same database.
    const other = await buildApp({ config: t.config, database: t.database, clock, logger: false });
    try {
      const passes = await Promise.all([
        t.app.services.emailMessages.runDueMessages(),
        other.services.emailMessages.runDueMessages(),
        t.app.services.emailMessages.runDueMessages(),
        other.services.emailMessages.runDueMessages(),
      ]);
      assert.deepEqual(passes.flatMap((p) => p.sent).sort(), messages.map((m) => m.id).sort(), 'each message finished by exactly one pass');
    } finally {
      await other.close();
    }
    for (const m of messages) {
      const addresses = receivedFor(m.subject).flatMap((x) => x.to);
      assert.equal(new Set(addresses).size, addresses.length, `no duplicates for ${m.subject}`);
      const read = (await call('GET', `/email_messages/${m.id}`)).body;
      assert.equal(addresses.length, read.recipient_counts.total);
      assert.deepEqual([read.status, read.recipient_counts.failed], ['sent', 0]);
      assert.equal((await sentEvents(m.id)).length, 1);
    }
  });

  test('a worker that dies mid-way: the next claim resumes, never sending again what may have gone out', async () => {
    const to = await people(3);
    const m = await schedule(to.map((p) => p.id));
    clock.advance(10 * MINUTE);
    const mail = t.app.services.mail;
    const original = mail.send;
    let calls = 0;
    // The second mail never comes back, as if the process died while handing it over.
    mail.send = (msg) => (++calls === 2 ? new Promise<void>(() => {}) : original.call(mail, msg));
    try {
      void t.app.services.emailMessages.runDueMessages();
      await until(() => calls >= 2, 'the second mail handed over');
      assert.equal(calls, 2);
    } finally {
      mail.send = original;
    }
    assert.equal(receivedFor(m.subject).length, 1);
    assert.equal((await call('GET', `/email_messages/${m.id}`)).body.status, 'sending');

    // While the claim holds, no other pass touches the message.
    assert.deepEqual((await t.app.services.emailMessages.runDueMessages()).sent, []);
    clock.advance(CLAIM_LEASE_MS);
    const pass = await t.app.services.emailMessages.runDueMessages();
    assert.deepEqual(pass.sent, [m.id]);

    const rows = await recipients(m.id);
    assert.deepEqual(rows.map((r) => r.outcome).sort(), ['failed', 'sent', 'sent']);
    assert.equal(rows.find((r) => r.outcome === 'failed')!.error, IN_DOUBT_ERROR);
    const addresses = receivedFor(m.subject).flatMap((x) => x.to);
    assert.equal(addresses.length, 2);
    assert.equal(new Set(addresses).size, 2);
    assert.ok(!addresses.includes(rows.find((r) => r.outcome === 'failed')!.address), 'the mail in doubt was not sent again');
    assert.deepEqual((await call('GET', `/email_messages/${m.id}`)).body.recipient_counts, { total: 3, sent: 2, failed: 1 });
  });

  test('a pass stopped at shutdown gives its claim up; the next pass finishes without failing anyone', async () => {
    const to = await people(3);
    const m = await schedule(to.map((p) => p.id));
    clock.advance(10 * MINUTE);
    const stop = new AbortController();
    const mail = t.app.services.mail;
    const original = mail.send;
    mail.send = async (msg) => {
      await original.call(mail, msg);
      stop.abort();
    };
    try {
      assert.deepEqual((await t.app.services.emailMessages.runDueMessages(undefined, stop.signal)).sent, []);
    } finally {
      mail.send = original;
    }
    assert.equal(receivedFor(m.subject).length, 1);
    assert.equal((await call('GET', `/email_messages/${m.id}`)).body.status, 'sending');
    assert.deepEqual((await t.app.services.emailMessages.runDueMessages()).sent, [m.id], 'resumed at once, not after the lease');
    assert.deepEqual((await call('GET', `/email_messages/${m.id}`)).body.recipient_counts, { total: 3, sent: 3, failed: 0 });
    assert.equal(receivedFor(m.subject).length, 3);
  });

  test("a course's participants are resolved when sending starts, not when it was scheduled", async () => {
    const course = await t.make.course(c.org);
    const method = await t.app.services.enrolmentMethods.create(t.database.db, c.org.id, { course_id: course.id, type: 'manual' });
    const [early, late] = await people(2);
    await t.app.services.enrolmentMethods.enrol(t.database.db, c.org.id, method.id, early.id);
    const subject = `Course news ${Math.random()}`;
    const res = await call('POST', '/email_messages', { subject, body: { format: 'plain', content: 'Hi all' }, audience: { type: 'course', course_id: course.id }, status: 'scheduled', send_at: new Date(clock.now().getTime() + MINUTE).toISOString() });
    await t.app.services.enrolmentMethods.enrol(t.database.db, c.org.id, method.id, late.id);
    clock.advance(MINUTE);
    await t.app.services.emailMessages.runDueMessages();
    assert.deepEqual(receivedFor(subject).flatMap((x) => x.to).sort(), [await emailOf(early.id), await emailOf(late.id)].sort());
    assert.deepEqual((await call('GET', `/email_messages/${res.body.id}`)).body.recipient_counts, { total: 2, sent: 2, failed: 0 });
  });

  test('the worker loop (src/jobs) sends due messages by itself, and stops cleanly', async () => {
    const [p] = await people(1);
    const m = await schedule([p.id], 0);
    const logged: string[] = [];
    const jobs = backgroundJobs(t.app.services, { ...t.config, mailPollIntervalMs: 20 }).filter((j) => j.name === 'email_messages.send_due');
    const worker = startWorker(jobs, { info: (_o, msg) => logged.push(msg ?? ''), error: (o, msg) => logged.push(`${msg}: ${String((o as { err?: unknown }).err)}`) });
    try {
      await until(async () => (await call('GET', `/email_messages/${m.id}`)).body.status === 'sent', 'the message sent by the worker');
    } finally {
      await worker.stop();
    }
    assert.equal((await call('GET', `/email_messages/${m.id}`)).body.status, 'sent');
    assert.equal(receivedFor(m.subject).length, 1);
    assert.deepEqual(logged, ['worker started']);
  });
});

describe('sending when the SMTP server cannot be reached', () => {
  const clock = manualClock(new Date('2026-11-03T07:00:00.000Z'));
  let t: TestContext;
  before(async () => {
    const probe = createServer().listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const { port } = probe.address() as AddressInfo;
    await new Promise((resolve) => probe.close(resolve));
    t = await startTestApp({ clock, env: { SMTP_URL: `smtp://127.0.0.1:${port}` } });
  });
  after(() => t.close());

  test('nothing is claimed: the message stays scheduled for the next pass, with no recipient failed', async () => {
    const c = await t.make.caller();
    const m = await t.make.emailMessage(c.org, { status: 'scheduled', send_at: new Date(clock.now().getTime() + MINUTE).toISOString() });
    clock.advance(MINUTE);
    await assert.rejects(t.app.services.emailMessages.runDueMessages(), MailUnavailable);
    const read = await t.app.services.emailMessages.get(t.database.db, c.org.id, m.id);
    assert.deepEqual([read.status, read.recipient_counts], ['scheduled', null]);
    const rows = await t.database.db.selectFrom('email_message_recipients').selectAll().where('email_message_id', '=', m.id).execute();
    assert.deepEqual(rows, []);
  });
});

describe('sending without SMTP_URL: the mail log', () => {
  const clock = manualClock(new Date('2026-11-03T07:00:00.000Z'));
  let t: TestContext;
  before(async () => {
    t = await startTestApp({ clock });
  });
  after(() => t.close());

  test('each recipient gets a row in the organisation’s mail log, and counts as sent', async () => {
    const c = await t.make.caller();
    const [a, b] = [await t.make.person(c.org, { email: 'ada@school.test' }), await t.make.person(c.org, { email: 'bob@school.test' })];
    const m = await t.make.emailMessage(c.org, { subject: 'Logged', body: { format: 'html', content: '<p>Hi</p>' }, person_ids: [a.id, b.id], status: 'scheduled', send_at: new Date(clock.now().getTime() + MINUTE).toISOString() });
    clock.advance(MINUTE);
    assert.deepEqual((await t.app.services.emailMessages.runDueMessages()).sent, [m.id]);
    const log = await t.app.services.mailLog.list(t.database.db, c.org.id);
    assert.deepEqual(
      log.data.map((e) => [e.from, e.to, e.subject, e.html, e.text, e.created_at]).sort(),
      [
        ['Atrium <no-reply@localhost>', 'Test Person <ada@school.test>', 'Logged', '<p>Hi</p>', null, clock.now().toISOString()],
        ['Atrium <no-reply@localhost>', 'Test Person <bob@school.test>', 'Logged', '<p>Hi</p>', null, clock.now().toISOString()],
      ],
    );
    const read = await t.app.services.emailMessages.get(t.database.db, c.org.id, m.id);
    assert.deepEqual([read.status, read.recipient_counts], ['sent', { total: 2, sent: 2, failed: 0 }]);
  });
});
