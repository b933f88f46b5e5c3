// Webhooks against a real HTTPS receiver (self-signed certificate made by the test); every delivery is
// verified with the standardwebhooks library, as an integrator would. Time-dependent rules use the injected clock.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { startTestApp, manualClock, type TestContext } from '../../../test/support/harness.ts';
import type { Caller } from '../../../test/support/factories.ts';
import type { ReceivedRequest } from '../../../testkit/webhook-receiver.ts';
import { AUTO_DISABLE_FAILURES } from './deliverer.ts';
import { startSmtpServer } from '../../../test/support/smtp-server.ts';

const verify = (secret: string, r: ReceivedRequest) => new Webhook(secret).verify(r.body, r.headers) as { type: string; timestamp: string; data: Record<string, string> };

describe('webhooks', () => {
  const clock = manualClock(new Date('2026-11-05T08:00:00.000Z'));
  let t: TestContext;
  let c: Caller;
  before(async () => {
    t = await startTestApp({ clock });
    c = await t.make.caller();
  });
  after(() => t.close());
  beforeEach(() => t.receiver.respond(() => ({ status: 200 })));

  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) => t.api.request({ host: c.org.address, key: c.key, method, path, body });
  const hookPath = (name: string) => `/hooks/${name}-${Math.random().toString(36).slice(2)}`;
  const create = (path: string, extra: Record<string, unknown> = {}) => call('POST', '/webhook_subscriptions', { url: `${t.receiver.url}${path}`, event_types: ['*'], ...extra });
  const pump = async () => {
    while ((await t.app.services.webhookDelivery.dispatch()) > 0);
    while ((await t.app.services.webhookDelivery.deliver()) > 0);
  };
  const deliveryLog = async (subscriptionId: string) => (await call('GET', `/webhook_subscriptions/${subscriptionId}/deliveries`)).body.data;
  /** The log without the verification ping that opens it. */
  const deliveriesOf = async (subscriptionId: string) => (await deliveryLog(subscriptionId)).filter((d: { event_type: string }) => d.event_type !== 'webhook.ping');

  describe('POST /webhook_subscriptions (operation 6)', () => {
    test('201 after a signed webhook.ping is answered; the secret is returned once', async () => {
      const path = hookPath('create');
      const res = await create(path, { event_types: ['section.*', 'course.created'], notification_emails: ['ops@example.test'], rate_limit_per_minute: 120, description: 'Sync' });
      assert.equal(res.status, 201);
      assert.match(res.body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.equal(Buffer.from(res.body.secret.slice(6), 'base64').length, 32);
      assert.equal(res.body.status, 'enabled');
      assert.equal(res.body.verified_at, clock.now().toISOString());
      assert.deepEqual([res.body.event_types, res.body.rate_limit_per_minute, res.body.payload_version, res.body.consecutive_failures], [['section.*', 'course.created'], 120, 1, 0]);
      const [ping] = await t.receiver.waitFor(1, path);
      const payload = verify(res.body.secret, ping);
      assert.equal(payload.type, 'webhook.ping');
      assert.equal(payload.data.id, res.body.id);
      const [logged] = await deliveryLog(res.body.id);
      assert.equal(logged.event_id, ping.headers['webhook-id'], 'the ping opens the delivery log, with its webhook-id');
      assert.deepEqual([logged.event_type, logged.status, logged.attempts, logged.attempt_log[0].status_code], ['webhook.ping', 'succeeded', 1, 200]);
      const read = await call('GET', `/webhook_subscriptions/${res.body.id}`);
      assert.equal(read.body.secret, undefined);
      const row = await t.database.db.selectFrom('webhook_subscriptions').select('secret').where('id', '=', res.body.id).executeTakeFirstOrThrow();
      assert.ok(!row.secret.includes(res.body.secret.slice(6, 20)), 'the secret is encrypted at rest');
    });

    test('409 resource.external_id_taken when a subscription already has the external_id, and nothing more is stored', async () => {
      const first = await create(hookPath('ext-1'), { external_id: 'hook-ext' });
      assert.equal(first.status, 201);
      const before = await t.database.db.selectFrom('webhook_subscriptions').select('id').execute();
      const taken = await create(hookPath('ext-2'), { external_id: 'hook-ext' });
      assert.equal(taken.status, 409);
      assert.equal(taken.body.code, 'resource.external_id_taken');
      assert.deepEqual(await t.database.db.selectFrom('webhook_subscriptions').select('id').execute(), before);
    });

    test('422 at /url when the endpoint does not answer 2xx, and nothing is stored', async () => {
      const before = await t.database.db.selectFrom('webhook_subscriptions').select('id').execute();
      for (const status of [500, 301, 404]) {
        t.receiver.respond(() => ({ status, headers: status === 301 ? { location: 'https://example.com' } : undefined }));
        const res = await create(hookPath(`fail-${status}`));
        assert.equal(res.status, 422);
        assert.equal(res.body.errors[0].path, '/url');
        assert.match(res.body.errors[0].detail, new RegExp(`HTTP ${status}`));
      }
      const closed = await call('POST', '/webhook_subscriptions', { url: 'https://127.0.0.1:1/nothing', event_types: ['*'] });
      assert.equal(closed.status, 422);
      assert.equal(closed.body.errors[0].path, '/url');
      assert.equal((await t.database.db.selectFrom('webhook_subscriptions').select('id').execute()).length, before.length);
    });

    test('422 for each bound of the body', async () => {
      const url = `${t.receiver.url}/hooks/bounds`;
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ url: 'http://example.com/x', event_types: ['*'] }, '/url'],
        [{ url: `https://example.com/${'a'.repeat(2000)}`, event_types: ['*'] }, '/url'],
        [{ url, event_types: [] }, '/event_types'],
        [{ url, event_types: Array.from({ length: 101 }, () => '*') }, '/event_types'],
        [{ url, event_types: ['section.exploded'] }, '/event_types/0'],
        [{ url, event_types: ['nothing.*'] }, '/event_types/0'],
        [{ url, event_types: ['*'], notification_emails: ['not-an-address'] }, '/notification_emails/0'],
        [{ url, event_types: ['*'], rate_limit_per_minute: 0 }, '/rate_limit_per_minute'],
        [{ url, event_types: ['*'], rate_limit_per_minute: 6001 }, '/rate_limit_per_minute'],
        [{ url, event_types: ['*'], filters: { 'Course Id': 'x' } }, '/filters'],
        [{ event_types: ['*'] }, '/url'],
      ];
      for (const [body, pointer] of cases) {
        const res = await call('POST', '/webhook_subscriptions', body);
        assert.equal(res.status, 422, JSON.stringify(body).slice(0, 120));
        assert.ok(res.body.errors.some((e: { path: string }) => e.path.startsWith(pointer)), `${pointer}: ${JSON.stringify(res.body.errors)}`);
      }
    });

    test('422 for an address the SSRF guard refuses (not allowed by configuration)', async () => {
      const strict = await startTestApp({ env: { WEBHOOK_ALLOW_HOSTS: '' } });
      try {
        const o = await strict.make.caller();
        for (const url of [`${strict.receiver.url}/x`, 'https://10.1.2.3/x', 'https://[::1]/x', 'https://169.254.169.254/latest', 'https://localhost/x']) {
          const res = await strict.api.request({ host: o.org.address, key: o.key, method: 'POST', path: '/webhook_subscriptions', body: { url, event_types: ['*'] } });
          assert.equal(res.status, 422, url);
          assert.equal(res.body.errors[0].code, 'unsafe_url', url);
        }
        assert.equal(strict.receiver.received.length, 0, 'nothing was sent');
      } finally {
        await strict.close();
      }
    });

    test('409 for a second subscription to the same URL', async () => {
      const path = hookPath('dup');
      assert.equal((await create(path)).status, 201);
      const again = await create(path);
      assert.equal(again.status, 409);
      assert.equal(again.body.code, 'webhook_subscription.url_taken');
    });
  });

  describe('delivery', () => {
    test('an event arrives signed, with webhook-id, webhook-timestamp, and {type, timestamp, data}', async () => {
      const path = hookPath('deliver');
      const sub = (await create(path, { event_types: ['section.created'] })).body;
      const section = await t.make.section(c.org, { title: 'Week 9' });
      await pump();
      const [, delivery] = await t.receiver.waitFor(2, path);
      const payload = verify(sub.secret, delivery);
      assert.equal(payload.type, 'section.created');
      assert.equal(payload.data.id, section.id);
      assert.equal(payload.data.course_id, section.course_id);
      assert.match(payload.data.summary, /Week 9/);
      assert.equal(delivery.headers['content-type'], 'application/json');
      const log = await deliveriesOf(sub.id);
      assert.equal(log[0].status, 'succeeded');
      assert.equal(log[0].event_id, delivery.headers['webhook-id']);
      assert.equal(log[0].attempt_log[0].status_code, 200);
    });

    test('failures are retried at widening intervals with the same webhook-id; 3xx is a failure', async () => {
      const path = hookPath('retry');
      const sub = (await create(path, { event_types: ['course.created'] })).body;
      const answers = [500, 302, 200];
      t.receiver.respond((r) => (r.path === path && JSON.parse(r.body).type !== 'webhook.ping' ? { status: answers.shift() ?? 200, headers: { location: 'https://elsewhere.test' } } : { status: 200 }));
      await t.make.course(c.org);
      await pump();
      let log = await deliveriesOf(sub.id);
      assert.equal(log[0].status, 'pending');
      const firstRetry = Date.parse(log[0].next_attempt_at) - clock.now().getTime();
      assert.ok(firstRetry >= 4000 && firstRetry <= 6000, `first retry after ${firstRetry} ms`);
      clock.advance(firstRetry);
      await pump();
      log = await deliveriesOf(sub.id);
      const secondRetry = Date.parse(log[0].next_attempt_at) - clock.now().getTime();
      assert.ok(secondRetry >= 240_000, `second retry after ${secondRetry} ms`);
      clock.advance(secondRetry);
      await pump();
      log = await deliveriesOf(sub.id);
      assert.equal(log[0].status, 'succeeded');
      assert.deepEqual(log[0].attempt_log.map((a: { status_code: number }) => a.status_code), [500, 302, 200]);
      const received = (await t.receiver.waitFor(4, path)).slice(1);
      assert.equal(new Set(received.map((r) => r.headers['webhook-id'])).size, 1);
      const health = (await call('GET', `/webhook_subscriptions/${sub.id}`)).body;
      assert.equal(health.consecutive_failures, 0);
      assert.equal(health.last_success_at, clock.now().toISOString());
    });

    test('Retry-After on 429/503 is honoured; the last attempt is within 72 hours of the first', async () => {
      const path = hookPath('retry-after');
      const sub = (await create(path, { event_types: ['category.created'] })).body;
      t.receiver.respond((r) => (r.path === path && JSON.parse(r.body).type !== 'webhook.ping' ? { status: 503, headers: { 'retry-after': '7200' } } : { status: 200 }));
      await t.make.category(c.org);
      await pump();
      const [delivery] = await deliveriesOf(sub.id);
      assert.ok(Date.parse(delivery.next_attempt_at) - clock.now().getTime() >= 7200_000);
      const first = Date.parse(delivery.attempt_log[0].attempted_at);
      for (let i = 0; i < 20; i++) {
        const [d] = await deliveriesOf(sub.id);
        if (d.status !== 'pending') break;
        clock.set(new Date(d.next_attempt_at));
        await pump();
      }
      const [done] = await deliveriesOf(sub.id);
      assert.equal(done.status, 'failed');
      const last = Date.parse(done.attempt_log.at(-1).attempted_at);
      assert.ok(last - first <= 72 * 3600_000, `last attempt ${(last - first) / 3600_000} h after the first`);
      assert.ok(done.attempt_log.length >= 5);
    });

    test('410 Gone disables the subscription', async () => {
      const path = hookPath('gone');
      const sub = (await create(path, { event_types: ['section.created'] })).body;
      t.receiver.respond((r) => (r.path === path && JSON.parse(r.body).type !== 'webhook.ping' ? { status: 410 } : { status: 200 }));
      await t.make.section(c.org);
      await pump();
      const read = (await call('GET', `/webhook_subscriptions/${sub.id}`)).body;
      assert.equal(read.status, 'disabled');
      assert.match(read.disabled_reason, /410/);
      assert.equal((await deliveriesOf(sub.id))[0].status, 'failed');
    });

    test('filters: only events whose data matches every filter', async () => {
      const path = hookPath('filters');
      const wanted = await t.make.course(c.org);
      const other = await t.make.course(c.org);
      await create(path, { event_types: ['section.created'], filters: { course_id: [wanted.id] } });
      const mine = await t.make.section(c.org, { course_id: wanted.id });
      await t.make.section(c.org, { course_id: other.id });
      await pump();
      const received = (await t.receiver.waitFor(2, path)).slice(1);
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(
        t.receiver.received.filter((r) => r.path === path).slice(1).map((r) => JSON.parse(r.body).data.id),
        [mine.id],
      );
      assert.equal(received.length, 1);
    });

    test('rate_limit_per_minute delays deliveries, never drops them', async () => {
      const path = hookPath('rate');
      const sub = (await create(path, { event_types: ['category.created'], rate_limit_per_minute: 2 })).body;
      for (let i = 0; i < 5; i++) await t.make.category(c.org, { name: `Rated ${i}` });
      await pump();
      let log = await deliveriesOf(sub.id);
      // The verification ping was one of this minute's two requests to the endpoint.
      assert.equal(log.filter((d: { status: string }) => d.status === 'succeeded').length, 1);
      for (let i = 0; i < 5 && log.some((d: { status: string }) => d.status === 'pending'); i++) {
        clock.advance(61_000);
        await pump();
        log = await deliveriesOf(sub.id);
      }
      assert.equal(log.filter((d: { status: string }) => d.status === 'succeeded').length, 5);
    });

    test('rotate_secret: for a while deliveries carry two signatures, and either secret verifies them', async () => {
      const path = hookPath('rotate');
      const sub = (await create(path, { event_types: ['course.created'] })).body;
      const rotated = await call('POST', `/webhook_subscriptions/${sub.id}/actions/rotate_secret`);
      assert.equal(rotated.status, 200);
      assert.notEqual(rotated.body.secret, sub.secret);
      await t.make.course(c.org);
      await pump();
      const [, delivery] = await t.receiver.waitFor(2, path);
      assert.equal(delivery.headers['webhook-signature'].split(' ').length, 2);
      assert.equal(verify(sub.secret, delivery).type, 'course.created');
      assert.equal(verify(rotated.body.secret, delivery).type, 'course.created');
      clock.set(new Date(Date.parse(rotated.body.previous_secret_expires_at) + 1000));
      await t.make.course(c.org);
      await pump();
      const [, , later] = await t.receiver.waitFor(3, path);
      assert.equal(later.headers['webhook-signature'].split(' ').length, 1);
      assert.throws(() => verify(sub.secret, later));
    });

    test('the address is checked again at delivery: an endpoint now on a refused address is not contacted', async () => {
      const sub = await t.make.webhookSubscription(c.org, { url: 'https://10.20.30.40/hooks/internal', event_types: ['section.created'] });
      await t.make.section(c.org);
      await pump();
      const [delivery] = await deliveriesOf(sub.id);
      assert.equal(delivery.attempt_log[0].status_code, null);
      assert.match(delivery.attempt_log[0].error, /non-public/);
    });

    test('after repeated failure with no success for a day: auto_disabled with a reason, and a mail to each notification address', async () => {
      const path = hookPath('auto');
      const sub = (await create(path, { event_types: ['category.created'], notification_emails: ['ops@example.test', 'dev@example.test'] })).body;
      t.receiver.respond((r) => (r.path === path && JSON.parse(r.body).type !== 'webhook.ping' ? { status: 500 } : { status: 200 }));
      clock.advance(25 * 3600_000);
      for (let i = 0; i < AUTO_DISABLE_FAILURES; i++) await t.make.category(c.org, { name: `Failing ${i}` });
      await pump();
      const read = (await call('GET', `/webhook_subscriptions/${sub.id}`)).body;
      assert.equal(read.status, 'auto_disabled');
      assert.match(read.disabled_reason, /failed deliveries in a row/);
      assert.ok(read.consecutive_failures >= AUTO_DISABLE_FAILURES);
      const mails = await t.database.db.selectFrom('mail_log').selectAll().where('subject', '=', 'Webhook subscription disabled').execute();
      assert.deepEqual(mails.map((m) => (m as unknown as { to_address: string }).to_address).sort(), ['dev@example.test', 'ops@example.test']);
      assert.match(mails[0].text_body!, new RegExp(`\\n\\nhttp://${c.org.address.replaceAll('.', '\\.')}:8080/admin/webhooks/${sub.id}$`), 'a link to its page at the public origin');
      const enabled = await call('PATCH', `/webhook_subscriptions/${sub.id}`, { status: 'enabled' });
      assert.equal(enabled.body.status, 'enabled');
      assert.equal(enabled.body.consecutive_failures, 0);
    });
  });

  describe('supporting operations', () => {
    test('send_test and resend deliver the same event id again; the delivery log shows every attempt', async () => {
      const path = hookPath('test');
      const sub = (await create(path, { event_types: ['course.created'] })).body;
      const queued = await call('POST', `/webhook_subscriptions/${sub.id}/actions/send_test`);
      assert.equal(queued.status, 201);
      await pump();
      const [, first] = await t.receiver.waitFor(2, path);
      assert.equal(verify(sub.secret, first).type, 'webhook.test');
      const pending = await call('POST', `/webhook_subscriptions/${sub.id}/deliveries/${queued.body.id}/actions/resend`);
      assert.equal(pending.status, 200);
      const conflict = await call('POST', `/webhook_subscriptions/${sub.id}/deliveries/${queued.body.id}/actions/resend`);
      assert.equal(conflict.status, 409);
      await pump();
      const [, , second] = await t.receiver.waitFor(3, path);
      assert.equal(second.headers['webhook-id'], first.headers['webhook-id']);
      assert.equal((await call('POST', `/webhook_subscriptions/${sub.id}/deliveries/01a1ffb1-ef6f-770b-ba7c-b487911c9252/actions/resend`)).status, 404);
    });

    test('PATCH re-verifies a new URL, disables and enables; DELETE abandons pending deliveries', async () => {
      const sub = (await create(hookPath('patch'), { event_types: ['section.created'] })).body;
      t.receiver.respond(() => ({ status: 500 }));
      const refused = await call('PATCH', `/webhook_subscriptions/${sub.id}`, { url: `${t.receiver.url}${hookPath('moved')}` });
      assert.equal(refused.status, 422);
      const movedPath = hookPath('moved');
      t.receiver.respond((r) => (r.path === movedPath && JSON.parse(r.body).type !== 'webhook.ping' ? { status: 500 } : { status: 200 }));
      const moved = await call('PATCH', `/webhook_subscriptions/${sub.id}`, { url: `${t.receiver.url}${movedPath}` });
      assert.equal(moved.status, 200);
      await t.make.section(c.org);
      await pump();
      const [failing] = await deliveriesOf(sub.id);
      assert.equal(failing.attempts, 1);
      const disabled = await call('PATCH', `/webhook_subscriptions/${sub.id}`, { status: 'disabled' });
      assert.equal(disabled.body.status, 'disabled');
      await t.make.section(c.org);
      clock.advance(3600_000);
      await pump();
      const log = await deliveriesOf(sub.id);
      assert.equal(log.length, 1, 'no new deliveries while disabled');
      assert.deepEqual([log[0].status, log[0].attempts], ['pending', 1], 'a disabled subscription’s deliveries wait');
      assert.equal((await call('DELETE', `/webhook_subscriptions/${sub.id}`)).status, 204);
      assert.equal((await call('GET', `/webhook_subscriptions/${sub.id}`)).status, 404);
      const rows = await t.database.db.selectFrom('webhook_deliveries').select('status').where('subscription_id', '=', sub.id).where('event_type', '!=', 'webhook.ping').execute();
      assert.ok(rows.every((r) => r.status === 'failed'));
    });

    test('GET /event_types lists the catalog', async () => {
      const res = await call('GET', '/event_types');
      assert.ok(res.body.data.some((e: { name: string; area: string }) => e.name === 'section.updated' && e.area === 'section'));
    });
  });
});

describe('webhook notification mails over SMTP', () => {
  test('an auto_disabled subscription mails each notification address through the SMTP server', async () => {
    const smtp = await startSmtpServer();
    const clock = manualClock(new Date('2026-11-06T08:00:00.000Z'));
    const t = await startTestApp({ clock, env: { SMTP_URL: smtp.url } });
    try {
      const c = await t.make.caller();
      t.receiver.respond(() => ({ status: 500 }));
      const sub = await t.make.webhookSubscription(c.org, { event_types: ['category.created'] });
      await t.app.services.webhooks.update(t.database.db, c.org.id, sub.id, { notification_emails: ['ops@example.test', 'dev@example.test'] }, undefined);
      clock.advance(25 * 3600_000);
      for (let i = 0; i < AUTO_DISABLE_FAILURES; i++) await t.make.category(c.org, { name: `Down ${i}` });
      while ((await t.app.services.webhookDelivery.dispatch()) > 0);
      while ((await t.app.services.webhookDelivery.deliver()) > 0);
      assert.equal((await t.app.services.webhooks.get(t.database.db, c.org.id, sub.id)).status, 'auto_disabled');
      const mails = smtp.received.filter((m) => m.subject === 'Webhook subscription disabled');
      assert.deepEqual(mails.flatMap((m) => m.to).sort(), ['dev@example.test', 'ops@example.test']);
      assert.match(mails[0].raw, new RegExp(sub.id));
    } finally {
      await t.close();
      await smtp.close();
    }
  });
});
