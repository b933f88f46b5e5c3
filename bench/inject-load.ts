// What a request costs by itself, without sockets: the bare PATCH, the spread PATCH and the read through
// app.inject, CONCURRENCY at a time (default 10), in one process on a fresh database, 5 interleaved rounds of
// CALLS each (default 3,000), server µs per request, the median printed (inject-harness.ts). One at a time beside
// ten at a time shows what waiting for the database costs a request (bench/README.md, "group commit on
// PostgreSQL").
//
//   node bench/inject-load.ts sqlite|postgres      # BENCH_DATABASE_URL for PostgreSQL, as npm run bench
//   CONCURRENCY=1 node bench/inject-load.ts postgres
import { bootInjectHarness, measureInjected, spreadPatch, type InjectCall } from './inject-harness.ts';

const dialect = process.argv[2] ?? '';
const { app, fixture: f, close } = await bootInjectHarness(dialect, (a) => void a.patch('/bench/bare', async () => ({ status: 'ok' })));

const headers = { host: f.host, authorization: `Bearer ${f.apiKey}`, 'content-type': 'application/json' };
const calls: Record<string, InjectCall> = {
  'bare PATCH': () => app.inject({ method: 'PATCH', url: '/bench/bare', headers, payload: '{"title":"Bare"}' }),
  'PATCH /sections/{id}': spreadPatch(app, f),
  'GET /sections/{id}': () => app.inject({ method: 'GET', url: `/api/v1/sections/${f.sectionId}`, headers: { host: f.host, authorization: headers.authorization } }),
};

const concurrency = Number(process.env.CONCURRENCY ?? 10);
const count = Number(process.env.CALLS ?? 3000);
const micros = await measureInjected(calls, { count, concurrency, warmUp: 300 });
const figures = Object.entries(micros).map(([name, value]) => `${name} ${value.toFixed(0)}`);
process.stdout.write(`${dialect}, ${concurrency} at a time, server µs per request (median of 5 rounds of ${count}): ${figures.join(', ')}\n`);
await close();
