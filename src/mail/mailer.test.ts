// The mail transport on its own: nodemailer against a real SMTP server the test starts, and the mail log
// that takes its place without SMTP_URL.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { once } from 'node:events';
import { startTestApp, manualClock, type TestContext } from '../../test/support/harness.ts';
import { startSmtpServer, type TestSmtpServer } from '../../test/support/smtp-server.ts';
import { createMailer } from './mailer.ts';
import { MailDeliveryError, MailUnavailable } from './mail.ts';

const FROM = 'Atrium Tests <no-reply@atrium.test>';

describe('SMTP transport (SMTP_URL set)', () => {
  let smtp: TestSmtpServer;
  before(async () => {
    smtp = await startSmtpServer();
  });
  after(() => smtp.close());

  test('hands the mail to the server: envelope, From, To, Subject and body as given', async () => {
    const mailer = createMailer({ smtpUrl: smtp.url, from: FROM }, { db: undefined as never, clock: manualClock() });
    try {
      assert.equal(mailer.kind, 'smtp');
      await mailer.verify();
      await mailer.send({ organisationId: null, to: { name: 'Ada Lovelace', address: 'ada@school.test' }, subject: 'Week 2 – reading', text: 'Chapter 3, please.' });
      const mail = smtp.received.at(-1)!;
      assert.deepEqual(mail.to, ['ada@school.test']);
      assert.equal(mail.from, 'no-reply@atrium.test');
      assert.match(mail.raw, /^From: Atrium Tests <no-reply@atrium\.test>/m);
      assert.match(mail.raw, /^To: Ada Lovelace <ada@school\.test>/m);
      assert.equal(mail.subject, 'Week 2 – reading');
      assert.match(mail.raw, /Chapter 3, please\./);
    } finally {
      mailer.close();
    }
  });

  test("a recipient the server refuses is a permanent MailDeliveryError carrying the server's answer", async () => {
    smtp.reject.add('nobody@school.test');
    const mailer = createMailer({ smtpUrl: smtp.url, from: FROM }, { db: undefined as never, clock: manualClock() });
    try {
      const before = smtp.received.length;
      await assert.rejects(
        mailer.send({ organisationId: null, to: { name: 'Nobody', address: 'nobody@school.test' }, subject: 'Hi', text: 'Hi' }),
        (err: unknown) => err instanceof MailDeliveryError && err.permanent && /550/.test(err.detail) && /No such user/.test(err.detail),
      );
      assert.equal(smtp.received.length, before, 'nothing was accepted');
    } finally {
      mailer.close();
    }
  });

  test('an unreachable server: verify() is MailUnavailable, so nothing is claimed for sending', async () => {
    // A port that was just free: nothing listens there.
    const probe = createServer().listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const { port } = probe.address() as AddressInfo;
    await new Promise((resolve) => probe.close(resolve));
    const mailer = createMailer({ smtpUrl: `smtp://127.0.0.1:${port}`, from: FROM }, { db: undefined as never, clock: manualClock() });
    try {
      await assert.rejects(mailer.verify(), (err: unknown) => err instanceof MailUnavailable && /SMTP server cannot be used/.test((err as Error).message));
    } finally {
      mailer.close();
    }
  });
});

describe('mail log (SMTP_URL unset)', () => {
  const clock = manualClock(new Date('2026-11-05T09:00:00.000Z'));
  let t: TestContext;
  before(async () => {
    t = await startTestApp({ clock });
  });
  after(() => t.close());

  test("each mail becomes a row of its organisation's log, read back in order and paged", async () => {
    const mine = await t.make.org();
    const theirs = await t.make.org();
    const mailer = t.app.services.mail;
    assert.equal(mailer.kind, 'log');
    assert.equal(mailer.from, 'Atrium <no-reply@localhost>', 'MAIL_FROM default');
    await mailer.verify();
    await mailer.send({ organisationId: mine.id, to: { name: 'Ada', address: 'ada@school.test' }, subject: 'First', text: 'One' });
    await mailer.send({ organisationId: mine.id, to: { name: '', address: 'grace@school.test' }, subject: 'Second', html: '<p>Two</p>' });
    await mailer.send({ organisationId: theirs.id, to: { name: 'Other', address: 'other@elsewhere.test' }, subject: 'Not yours', text: '…' });

    const first = await t.app.services.mailLog.list(t.database.db, mine.id, { limit: 1 });
    assert.deepEqual(
      first.data.map(({ id: _id, ...rest }) => rest),
      [{ from: 'Atrium <no-reply@localhost>', to: 'Ada <ada@school.test>', subject: 'First', text: 'One', html: null, created_at: '2026-11-05T09:00:00.000Z' }],
    );
    assert.equal(first.page.has_more, true);
    const second = await t.app.services.mailLog.list(t.database.db, mine.id, { limit: 1, cursor: first.page.next_cursor! });
    assert.deepEqual(second.data.map((m) => [m.to, m.subject, m.text, m.html]), [['grace@school.test', 'Second', null, '<p>Two</p>']]);
    assert.equal(second.page.has_more, false);
    const others = await t.app.services.mailLog.list(t.database.db, theirs.id);
    assert.deepEqual(others.data.map((m) => m.subject), ['Not yours']);
  });
});
