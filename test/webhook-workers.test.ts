// Delivery across worker processes: a worker killed mid-delivery loses nothing (its lease runs out and another
// worker delivers), and on PostgreSQL two workers share 1,000 deliveries without delivering any twice.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { startTestApp, dialectUnderTest, type TestContext } from './support/harness.ts';
import type { Caller } from './support/factories.ts';
import { until } from './support/wait.ts';

const cli = path.join(import.meta.dirname, '..', 'src', 'cli', 'main.ts');

function startWorker(t: TestContext, extra: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, [cli, 'worker'], {
    env: { PATH: process.env.PATH ?? '', ...t.processEnv, WEBHOOK_POLL_INTERVAL_MS: '50', MAIL_POLL_INTERVAL_MS: '600000', ...extra },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

const stop = (worker: ChildProcess, signal: NodeJS.Signals = 'SIGTERM') =>
  new Promise<void>((resolve) => {
    if (worker.exitCode !== null || worker.signalCode !== null) return resolve();
    worker.once('exit', () => resolve());
    worker.kill(signal);
  });

const eventIdsOf = (t: TestContext, prefix: string) => t.receiver.received.filter((r) => r.path.startsWith(prefix) && JSON.parse(r.body).type !== 'webhook.ping').map((r) => r.headers['webhook-id']);


describe('webhook workers', () => {
  let t: TestContext;
  let c: Caller;
  before(async () => {
    t = await startTestApp();
    c = await t.make.caller();
  });
  after(() => t.close());

  test('a worker killed mid-delivery loses nothing: after its lease another worker delivers every event', async () => {
    const prefix = '/hooks/fault';
    await t.make.webhookSubscription(c.org, { url: `${t.receiver.url}${prefix}`, event_types: ['category.created'] });
    let hung = false;
    // The first delivery hangs, so the worker is killed with a request in flight.
    t.receiver.respond((r) => {
      if (r.path.startsWith(prefix) && !hung) {
        hung = true;
        return { status: 200, delayMs: 5000 };
      }
      return { status: 200 };
    });
    const categories = [];
    for (let i = 0; i < 10; i++) categories.push(await t.make.category(c.org, { name: `Fault ${i}` }));
    const expected = await t.database.db.selectFrom('outbox_events').select('id').where('organisation_id', '=', c.org.id).where('type', '=', 'category.created').execute();
    assert.equal(expected.length, 10);

    const first = startWorker(t, { WEBHOOK_LEASE_MS: '2000' });
    let inFlight: Set<string>;
    try {
      await until(() => hung, 'the first delivery', 15_000);
      await stop(first, 'SIGKILL');
    } finally {
      await stop(first, 'SIGKILL');
      inFlight = new Set(eventIdsOf(t, prefix));
    }
    const second = startWorker(t, { WEBHOOK_LEASE_MS: '2000' });
    const settled = async () =>
      (await t.database.db.selectFrom('webhook_deliveries').select('status').where('organisation_id', '=', c.org.id).execute()).filter((r) => r.status === 'succeeded').length === 10;
    try {
      // Including the one the killed worker had in flight: it waits for its lease to run out.
      await until(settled, 'every delivery to succeed', 30_000);
    } finally {
      await stop(second);
    }
    const received = eventIdsOf(t, prefix);
    assert.deepEqual(new Set(received), new Set(expected.map((e) => e.id)));
    // Only what the killed worker had in flight (sent, outcome not yet recorded) may arrive twice.
    const afterKill = received.slice(inFlight.size);
    for (const id of afterKill.filter((id, i) => afterKill.indexOf(id) !== i || inFlight.has(id))) assert.ok(inFlight.has(id), `${id} arrived twice`);
    assert.equal(new Set(afterKill).size, afterKill.length, 'the surviving worker sent each event once');
    const rows = await t.database.db.selectFrom('webhook_deliveries').select('status').where('organisation_id', '=', c.org.id).execute();
    assert.ok(rows.every((r) => r.status === 'succeeded'));
  });

  test(
    'two workers on PostgreSQL deliver 1,000 events: none lost, none delivered twice',
    { skip: dialectUnderTest === 'postgres' ? false : 'needs PostgreSQL (TEST_DATABASE_URL): SQLite has one writer at a time', timeout: 120_000 },
    async () => {
      const prefix = '/hooks/pair';
      t.receiver.respond(() => ({ status: 200 }));
      await t.make.webhookSubscription(c.org, { url: `${t.receiver.url}${prefix}`, event_types: ['section.created'] });
      const course = await t.make.course(c.org);
      await t.database.db.transaction().execute(async (tx) => {
        for (let i = 0; i < 1000; i++) await t.app.services.sections.create(tx, c.org.id, { course_id: course.id, title: `S${i}` });
      });
      const workers = [startWorker(t), startWorker(t)];
      try {
        await until(() => new Set(eventIdsOf(t, prefix)).size >= 1000, '1,000 events', 100_000);
        await new Promise((r) => setTimeout(r, 500));
      } finally {
        await Promise.all(workers.map((w) => stop(w)));
      }
      const received = eventIdsOf(t, prefix);
      assert.equal(new Set(received).size, 1000);
      assert.equal(received.length, 1000, 'no event delivered twice');
    },
  );
});
