// Server-process entry for the benchmark. It runs apart from the load generator so that autocannon does not
// share (and steal) the server's event loop: on a 2-core machine each gets a core.
//
// Protocol with bench/server-process.ts, one JSON object per line, on file descriptor 3 (stdout carries the
// app's log, as a deployed process's does):
//   fd 3, once:  {"ready": true, "port": …, "dialect": …, "fixture": {…}}  after seeding and listen
//   stdin `cpu`  → {"cpu": {"user": µs, "system": µs}, "rss": bytes, "sleeps"}   to attribute CPU per scenario
//   stdin `raw-lesson-pages N ROUND` → {"rawMs": ms}   N lesson pages inserted raw, the bulk suite's baseline
//   stdin `in-process read|patch|patch-audited SECONDS CONCURRENCY` → {done, cpuMicros, …}   a request's database work alone (in-process.ts)
//   stdin `profile-start` / `profile-stop FILE` → {}   a CPU profile of one measured window (BENCH_CPU_PROF)
//   stdin `section-updates SINCE [ID]` → {"events", "title", "latestTitles"}   what the PATCH scenarios committed
//   stdin `scale-grow SIZE` → {paths…}; `scale-plans PATH…` → {"plans"}   the scale suite (bench/scale-*.ts)
//   stdin `log-level LEVEL` → {}   the app logs at LEVEL from the next request on (the scenarios run at warn and at info)
//   stdin `stop` or end of stdin → close the app and the database, exit 0   (a dead parent stops us too)
// A command that fails answers {"error": "…"}.
import fs from 'node:fs';
import readline from 'node:readline';
import type { AddressInfo } from 'node:net';
import { buildApp } from '../src/app.ts';
import { systemClock } from '../src/clock.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { sqliteFileFor } from '../src/runtime.ts';
import { seed } from './seed.ts';
import { insertRawLessonPages } from './raw-lesson-pages.ts';
import { runInProcess, type InProcessWork } from './in-process.ts';
import { createWindowProfiler } from './profiler.ts';
import { sectionUpdates } from './section-updates.ts';
import { growScaleData } from './scale-data.ts';
import { createPlanReader } from './scale-plans.ts';
import { registerBareMcp } from './bare-mcp.ts';

const pgUrl = process.env.BENCH_DATABASE_URL;
const config = loadConfig({
  // Raised to info by `log-level` for the scenarios' second measurement.
  LOG_LEVEL: 'warn',
  DEV_BOOTSTRAP: 'false',
  HOST: '127.0.0.1',
  PORT: '0',
  DATA_DIR: process.env.DATA_DIR,
  DATABASE_URL: pgUrl,
  // The benchmark measures the request path, not the limiter refusing it: limits high enough never to trip
  // (their bookkeeping still runs on every request).
  RATE_LIMIT_PER_MINUTE: '100000000',
  CONCURRENCY_LIMIT: '100000',
});

// As the service opens it (src/runtime.ts, openServingDatabase): on SQLite, checkpoints in a thread while writes
// are sustained; BENCH_CHECKPOINT_THREAD=0 leaves them to SQLite, to compare.
const databaseOptions = { databaseUrl: config.databaseUrl, sqliteFile: sqliteFileFor(config), pgSchema: process.env.BENCH_PG_SCHEMA, checkpointThread: process.env.BENCH_CHECKPOINT_THREAD !== '0' };
const database = openDatabase(databaseOptions);
await migrateToLatest(database.db);
// The baselines: Fastify answering in this same app, behind the same app-wide hooks, with no auth, tenancy or
// database. `GET /healthz` is the app's own; a PATCH with a JSON body gets this bare route; the MCP SDK alone
// answers at /bench/mcp (bare-mcp.ts); /bench/work is the bare GET that burns a given CPU time.
const app = await buildApp({
  config,
  database,
  clock: systemClock,
  extraRoutes: (a) => {
    a.patch('/bench/bare', async () => ({ status: 'ok' }));
    // The bare GET plus `us` µs of CPU in its handler (http-scenarios.ts, bare-work-N).
    a.get('/bench/work', async (request) => {
      const until = process.hrtime.bigint() + BigInt(Math.round(Number((request.query as { us?: string }).us ?? 0) * 1000));
      while (process.hrtime.bigint() < until);
      return { status: 'ok' };
    });
    registerBareMcp(a);
  },
});
const fixture = await seed(app.services, database.db);
await app.listen({ host: config.host, port: config.port });
const { port } = app.server.address() as AddressInfo;

const send = (message: unknown) => fs.writeSync(3, JSON.stringify(message) + '\n');
send({ ready: true, port, dialect: database.dialect, fixture });

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await planReader.close();
  await app.close();
  await database.close();
  // Exit by draining the loop (not process.exit): whatever is still being written gets written.
  process.stdin.destroy();
}

const profiler = createWindowProfiler();
const planReader = createPlanReader(config, databaseOptions, systemClock);
const scaleHeaders = { host: fixture.scale.host, authorization: `Bearer ${fixture.scale.apiKey}` };
const commands: Record<string, (args: string[]) => Promise<Record<string, unknown>>> = {
  // Request loggers are children of the app's, made per request, so they take the new level at once.
  'log-level': async ([level]) => ((app.log.level = level), {}),
  'profile-start': async () => (await profiler.start(), {}),
  'profile-stop': async ([file]) => (await profiler.stop(file), {}),
  // `section-updates <since> [section id]`: what the PATCH scenarios committed (bench/section-updates.ts).
  'section-updates': ([since, sectionId]) => sectionUpdates(database.db, fixture.organisationId, since, sectionId),
  // `scale-grow <size>`: the scale organisation grown to `size` rows, and the paths to request at that size.
  'scale-grow': async ([size]) => ({ ...(await growScaleData(database.db, database.dialect, app.services.cursors, fixture.scale, Number(size))) }),
  // `scale-plans <path> <path> …`: the plans of what each path runs (bench/scale-plans.ts).
  'scale-plans': async (paths) => ({ plans: await planReader.plans(paths, scaleHeaders) }),
  // `raw-lesson-pages <count> <round>`: the bulk suite's baseline (bench/raw-lesson-pages.ts).
  'raw-lesson-pages': async ([count, round]) => ({ rawMs: await insertRawLessonPages(database.db, fixture, Number(count), round) }),
  // `in-process <read|patch> <seconds> <concurrency>`: a request's database work without the request (bench/in-process.ts).
  'in-process': async ([kind, seconds, concurrency]) => ({ ...(await runInProcess(kind as InProcessWork, app.services, database, fixture, Number(seconds), Number(concurrency))) }),
};

const lines = readline.createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const command = line.trim();
  const [name, ...args] = command.split(' ');
  if (command === 'cpu') send({ cpu: process.cpuUsage(), rss: process.memoryUsage.rss(), sleeps: process.resourceUsage().voluntaryContextSwitches });
  else if (command === 'stop') void stop();
  else if (commands[name]) commands[name](args).then(send, (err: unknown) => send({ error: err instanceof Error ? err.message : String(err) }));
  else send({ error: `unknown command ${JSON.stringify(name)}` });
});
lines.on('close', () => void stop());
process.on('SIGTERM', () => void stop());
