// Webhook delivery: how many deliveries one worker makes per second to a local HTTPS receiver, and how long
// an event takes from the commit of its change to its arrival (p50/p99). The worker runs in this process
// over its own fresh database of the run's dialect; the receiver runs in a child process (bench/receiver.ts)
// so that it does not share the worker's event loop. Goals: ≥ 2,000 deliveries/s, p50 ≤ 50 ms.
import { fork } from 'node:child_process';
import path from 'node:path';
import { systemClock } from '../src/clock.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { servicesFor } from '../src/runtime.ts';
import { startWorker } from '../src/jobs/worker.ts';
import { backgroundJobs } from '../src/jobs/jobs.ts';
import { testCertificate } from '../testkit/webhook-receiver.ts';
import { postgresTarget, sqliteTarget } from './databases.ts';
import type { Measurement, Suite } from './measurement.ts';
import type { BenchSettings } from './settings.ts';

const SUBSCRIPTIONS = 40; // each capped at 6,000 a minute by the spec, so spread the load
const THROUGHPUT_EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 6000);
const LATENCY_EVENTS = Number(process.env.BENCH_WEBHOOK_LATENCY_EVENTS ?? 200);

interface WebhookResult {
  dialect: string;
  deliveriesPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

const results: WebhookResult[] = [];

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function startReceiverProcess(): Promise<{ url: string; count(): Promise<number>; stop(): void }> {
  const child = fork(path.join(import.meta.dirname, 'receiver.ts'), [], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: { ...process.env, BENCH_TLS_DIR: testCertificate().dir },
  });
  const url = await new Promise<string>((resolve) => child.once('message', (m: { url: string }) => resolve(m.url)));
  const ask = <T>(what: string) =>
    new Promise<T>((resolve) => {
      child.once('message', (m: T) => resolve(m));
      child.send(what);
    });
  return { url, count: () => ask<number>('count'), stop: () => child.kill() };
}

async function measureDialect(dialect: 'sqlite' | 'postgres', settings: BenchSettings, progress: (t: string) => void): Promise<WebhookResult | undefined> {
  const target = dialect === 'sqlite' ? sqliteTarget() : await postgresTarget(settings.postgresUrl ?? '');
  if ('unavailable' in target) return undefined;
  const receiver = await startReceiverProcess();
  const env = target.env;
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    WEBHOOK_ALLOW_HOSTS: '127.0.0.1/32',
    WEBHOOK_CA_FILE: testCertificate().certFile,
    WEBHOOK_POLL_INTERVAL_MS: '10',
    ...(env.DATA_DIR ? { DATA_DIR: env.DATA_DIR } : {}),
  });
  const database = openDatabase(
    dialect === 'sqlite' ? { sqliteFile: path.join(env.DATA_DIR, 'atrium.sqlite') } : { databaseUrl: env.BENCH_DATABASE_URL, pgSchema: env.BENCH_PG_SCHEMA, poolSize: 10 },
  );
  try {
    await migrateToLatest(database.db);
    const services = await servicesFor(config, database, systemClock);
    const org = await services.organisations.create({ address: 'bench.test', name: 'Bench' });
    const course = await services.courses.createCourse(database.db, org.id, { fullname: 'Bench', shortname: 'B' });
    for (let i = 0; i < SUBSCRIPTIONS; i++) {
      await services.webhooks.create(database.db, org.id, { url: `${receiver.url}/s${i}`, event_types: ['section.*'] }, { subscriptionId: crypto.randomUUID(), secret: `whsec_${Buffer.alloc(32, i).toString('base64')}`, verifiedAt: new Date().toISOString() });
    }

    // Throughput: events committed first, then one worker drains them.
    progress(`${THROUGHPUT_EVENTS} events to ${SUBSCRIPTIONS} subscriptions`);
    const perSubscription = THROUGHPUT_EVENTS / SUBSCRIPTIONS;
    await database.db.transaction().execute(async (tx) => {
      for (let i = 0; i < perSubscription; i++) await services.sections.create(tx, org.id, { course_id: course.id, title: `T${i}` });
    });
    const started = performance.now();
    while ((await services.webhookDelivery.dispatch()) > 0);
    while ((await services.webhookDelivery.deliver()) > 0);
    const elapsed = (performance.now() - started) / 1000;
    const delivered = await receiver.count();
    progress(`${delivered} deliveries in ${elapsed.toFixed(2)} s; measuring commit-to-receipt latency`);
    if (delivered < THROUGHPUT_EVENTS) progress(`only ${delivered} of ${THROUGHPUT_EVENTS} deliveries arrived`);

    // Latency: the worker loop runs as in production; each change is committed, then timed to its arrival at
    // the one subscription of another organisation.
    const quiet = await services.organisations.create({ address: 'latency.bench.test', name: 'Latency' });
    const quietCourse = await services.courses.createCourse(database.db, quiet.id, { fullname: 'Latency', shortname: 'L' });
    await services.webhooks.create(database.db, quiet.id, { url: `${receiver.url}/latency`, event_types: ['section.created'] }, { subscriptionId: crypto.randomUUID(), secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`, verifiedAt: new Date().toISOString() });
    const worker = startWorker(backgroundJobs(services, config).filter((j) => j.name.startsWith('webhooks.')), { info: () => {}, error: () => {} });
    const latencies: number[] = [];
    try {
      for (let i = 0; i < LATENCY_EVENTS; i++) {
        const before = await receiver.count();
        const committed = performance.now();
        await database.db.transaction().execute((tx) => services.sections.create(tx, quiet.id, { course_id: quietCourse.id, title: `L${i}` }));
        while ((await receiver.count()) < before + 1) await new Promise((r) => setImmediate(r));
        latencies.push(performance.now() - committed);
      }
    } finally {
      await worker.stop();
    }
    latencies.sort((a, b) => a - b);
    return { dialect, deliveriesPerSecond: delivered / elapsed, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99) };
  } finally {
    receiver.stop();
    await database.close();
    await target.dispose();
  }
}

export const webhookSuite: Suite = {
  name: 'webhooks',
  async run(server, settings, progress): Promise<Measurement[]> {
    if (settings.scenarios && !settings.scenarios.has('webhooks')) return [];
    const r = await measureDialect(server.dialect as 'sqlite' | 'postgres', settings, progress);
    if (r) results.push(r);
    return [];
  },
  report() {
    if (results.length === 0) return undefined;
    const lines = results.map(
      (r) =>
        `${r.dialect.padEnd(9)} ${r.deliveriesPerSecond.toFixed(0).padStart(8)} deliveries/s (goal >= 2000)   commit-to-receipt of one event to one subscription: p50 ${r.p50Ms.toFixed(1)} ms (goal <= 50), p99 ${r.p99Ms.toFixed(1)} ms`,
    );
    return { text: `Webhook delivery (one worker, ${SUBSCRIPTIONS} subscriptions, local HTTPS receiver in another process)\n${lines.join('\n')}`, lines: [], failed: false };
  },
};
