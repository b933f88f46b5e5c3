// Server-process entry for the benchmark. It runs apart from the load generator so that autocannon does not
// share (and steal) the server's event loop: on a 2-core machine each gets a core.
//
// Protocol with bench/server-process.ts, one JSON object per line:
//   stdout, once:  {"ready": true, "port": …, "dialect": …, "fixture": {…}}  after seeding and listen
//   stdin `cpu`  → {"cpu": {"user": µs, "system": µs}, "rss": bytes}         to attribute CPU per scenario
//   stdin `raw-lesson-pages N ROUND` → {"rawMs": ms}   N lesson pages inserted raw, the bulk suite's baseline
//   stdin `stop` or end of stdin → close the app and the database, exit 0   (a dead parent stops us too)
// The app logs nothing (LOG_LEVEL=silent), so stdout carries only these lines.
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

const pgUrl = process.env.BENCH_DATABASE_URL;
const config = loadConfig({
  LOG_LEVEL: 'silent',
  DEV_BOOTSTRAP: 'false',
  HOST: '127.0.0.1',
  PORT: '0',
  DATA_DIR: process.env.DATA_DIR,
  DATABASE_URL: pgUrl,
  // The benchmark measures the request path, not the limiter refusing it: limits high enough never to trip
  // (their bookkeeping still runs on every request).
  RATE_LIMIT_PER_MINUTE: '1000000',
  CONCURRENCY_LIMIT: '100000',
});

const database = openDatabase({ databaseUrl: config.databaseUrl, sqliteFile: sqliteFileFor(config), pgSchema: process.env.BENCH_PG_SCHEMA });
await migrateToLatest(database.db);
const app = await buildApp({ config, database, clock: systemClock });
const fixture = await seed(app.services, database.db);
await app.listen({ host: config.host, port: config.port });
const { port } = app.server.address() as AddressInfo;

const send = (message: unknown) => process.stdout.write(JSON.stringify(message) + '\n');
send({ ready: true, port, dialect: database.dialect, fixture });

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await app.close();
  await database.close();
  // Exit by draining the loop (not process.exit) so --cpu-prof can write its profile.
  process.stdin.destroy();
}

const lines = readline.createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const command = line.trim();
  if (command === 'cpu') send({ cpu: process.cpuUsage(), rss: process.memoryUsage.rss() });
  else if (command === 'stop') void stop();
  else if (command.startsWith('raw-lesson-pages ')) {
    // `raw-lesson-pages <count> <round>` → {"rawMs": …}: the bulk suite's baseline (bench/raw-lesson-pages.ts).
    const [, count, round] = command.split(' ');
    void insertRawLessonPages(database.db, fixture, Number(count), round).then(
      (rawMs) => send({ rawMs }),
      (err: unknown) => send({ rawError: String(err) }),
    );
  }
});
lines.on('close', () => void stop());
process.on('SIGTERM', () => void stop());
