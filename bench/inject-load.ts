// What a request costs by itself, without sockets: the bare PATCH, the spread PATCH and the read through
// app.inject, CONCURRENCY at a time (default 10), in one process on a fresh database, 5 interleaved rounds of
// CALLS each (default 3,000), server µs per request, the median printed. No load generator shares the machine,
// so it is steadier than the socket figures; and one at a time beside ten at a time shows what a request's turns
// of the event loop cost (bench/README.md, "group commit on PostgreSQL"). Runs on an older checkout as it is
// (copy the file there) to compare two commits.
//
//   node bench/inject-load.ts sqlite|postgres      # BENCH_DATABASE_URL for PostgreSQL, as npm run bench
//   CONCURRENCY=1 node bench/inject-load.ts postgres
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.ts';
import { systemClock } from '../src/clock.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { sqliteFileFor } from '../src/runtime.ts';
import { postgresTarget, sqliteTarget, type DatabaseTarget } from './databases.ts';
import { seed } from './seed.ts';

const dialect = process.argv[2];
if (dialect !== 'sqlite' && dialect !== 'postgres') throw new Error('usage: node bench/inject-load.ts sqlite|postgres');
const target: DatabaseTarget | { unavailable: string } =
  dialect === 'sqlite' ? sqliteTarget() : await postgresTarget(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
if ('unavailable' in target) throw new Error(target.unavailable);

const config = loadConfig({
  LOG_LEVEL: 'warn',
  DEV_BOOTSTRAP: 'false',
  HOST: '127.0.0.1',
  PORT: '0',
  DATA_DIR: target.env.DATA_DIR,
  DATABASE_URL: target.env.BENCH_DATABASE_URL,
  RATE_LIMIT_PER_MINUTE: '1000000',
  CONCURRENCY_LIMIT: '100000',
});
const database = openDatabase({ databaseUrl: config.databaseUrl, sqliteFile: sqliteFileFor(config), pgSchema: target.env.BENCH_PG_SCHEMA });
await migrateToLatest(database.db);
const app = await buildApp({ config, database, clock: systemClock, extraRoutes: (a: FastifyInstance) => void a.patch('/bench/bare', async () => ({ status: 'ok' })) });
const f = await seed(app.services, database.db);

const headers = { host: f.host, authorization: `Bearer ${f.apiKey}`, 'content-type': 'application/json' };
let written = 0;
const calls: Record<string, () => Promise<{ statusCode: number; body: string }>> = {
  'bare PATCH': () => app.inject({ method: 'PATCH', url: '/bench/bare', headers, payload: '{"title":"Bare"}' }),
  'PATCH /sections/{id}': () => {
    written += 1;
    const id = f.spreadSectionIds[written % f.spreadSectionIds.length];
    return app.inject({ method: 'PATCH', url: `/api/v1/sections/${id}`, headers, payload: JSON.stringify({ title: `Injected #${process.pid}-${written}` }) });
  },
  'GET /sections/{id}': () => app.inject({ method: 'GET', url: `/api/v1/sections/${f.sectionId}`, headers: { host: f.host, authorization: headers.authorization } }),
};

const concurrency = Number(process.env.CONCURRENCY ?? 10);
const n = Number(process.env.CALLS ?? 3000);
/** `count` calls of `call`, `concurrency` at a time; each answer must be a 200. */
const load = (call: () => Promise<{ statusCode: number; body: string }>, count: number) =>
  Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = 0; i < count / concurrency; i++) {
        const res = await call();
        if (res.statusCode !== 200) throw new Error(`answered ${res.statusCode}: ${res.body}`);
      }
    }),
  );

const micros: Record<string, number[]> = {};
for (let round = 0; round < 5; round++) {
  for (const [name, call] of Object.entries(calls)) {
    await load(call, 300);
    const before = process.cpuUsage();
    await load(call, n);
    const used = process.cpuUsage(before);
    (micros[name] ??= []).push((used.user + used.system) / n);
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const figures = Object.entries(micros).map(([name, values]) => `${name} ${median(values).toFixed(0)}`);
process.stdout.write(`${dialect}, ${concurrency} at a time, server µs per request (median of 5 rounds of ${n}): ${figures.join(', ')}\n`);
await app.close();
await database.close();
await target.dispose();
