// What bench/inject-load.ts, bench/mcp-in-process.ts and bench/sqlite-stalls.ts share: the app on a fresh database of the bench's
// (databases.ts), seeded as the socket suites' is, and requests through app.inject measured as server CPU per
// request, several at a time, in interleaved rounds whose median is kept. No sockets and no load generator on
// the machine: steadier than the socket figures. To compare two commits, copy the scripts and this file there.
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.ts';
import { systemClock } from '../src/clock.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { sqliteFileFor } from '../src/runtime.ts';
import { postgresTarget, sqliteTarget } from './databases.ts';
import { seed, type Fixture } from './seed.ts';
import { concurrently } from './concurrently.ts';

export type InjectCall = () => Promise<{ statusCode: number; body: string }>;

export interface InjectHarness {
  app: FastifyInstance;
  fixture: Fixture;
  close(): Promise<void>;
}

/**
 * The app on a fresh database of `dialect` (PostgreSQL: BENCH_DATABASE_URL, as npm run bench), limits out of the
 * way; `checkpointThread` as the serving process opens it (src/runtime.ts).
 */
export async function bootInjectHarness(dialect: string, extraRoutes: (app: FastifyInstance) => void, options: { checkpointThread?: boolean } = {}): Promise<InjectHarness> {
  if (dialect !== 'sqlite' && dialect !== 'postgres') throw new Error(`no database called ${JSON.stringify(dialect)} (sqlite, postgres)`);
  const target = dialect === 'sqlite' ? sqliteTarget() : await postgresTarget(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
  if ('unavailable' in target) throw new Error(target.unavailable);
  const config = loadConfig({
    LOG_LEVEL: 'warn',
    DEV_BOOTSTRAP: 'false',
    HOST: '127.0.0.1',
    PORT: '0',
    DATA_DIR: target.env.DATA_DIR,
    DATABASE_URL: target.env.BENCH_DATABASE_URL,
    RATE_LIMIT_PER_MINUTE: '100000000',
    CONCURRENCY_LIMIT: '100000',
  });
  const database = openDatabase({ databaseUrl: config.databaseUrl, sqliteFile: sqliteFileFor(config), pgSchema: target.env.BENCH_PG_SCHEMA, ...options });
  await migrateToLatest(database.db);
  const app = await buildApp({ config, database, clock: systemClock, extraRoutes });
  const fixture = await seed(app.services, database.db);
  return {
    app,
    fixture,
    async close() {
      await app.close();
      await database.close();
      await target.dispose();
    },
  };
}

/** `count` calls of `call`, `concurrency` at a time; every answer must be a 200. */
export function injectMany(name: string, call: InjectCall, count: number, concurrency: number): Promise<void> {
  return concurrently(count, concurrency, async () => {
    const res = await call();
    if (res.statusCode !== 200) throw new Error(`${name} answered ${res.statusCode}: ${res.body}`);
  });
}

/** `PATCH /sections/{id}` of the seeded spread sections in turn, each with a title of its own. */
export function spreadPatch(app: FastifyInstance, fixture: Fixture): InjectCall {
  const headers = { host: fixture.host, authorization: `Bearer ${fixture.apiKey}`, 'content-type': 'application/json' };
  let written = 0;
  return () => {
    written += 1;
    const id = fixture.spreadSectionIds[written % fixture.spreadSectionIds.length];
    return app.inject({ method: 'PATCH', url: `/api/v1/sections/${id}`, headers, payload: JSON.stringify({ title: `Injected #${process.pid}-${written}` }) });
  };
}

/**
 * Server µs per request of each call (the median of `rounds` interleaved rounds of `count`, after a warm-up of
 * `warmUp`), `concurrency` at a time; every answer must be a 200.
 */
export async function measureInjected(calls: Record<string, InjectCall>, options: { count: number; concurrency: number; warmUp: number; rounds?: number }): Promise<Record<string, number>> {
  const { count, concurrency, warmUp, rounds = 5 } = options;
  const micros: Record<string, number[]> = {};
  for (let round = 0; round < rounds; round++) {
    for (const [name, call] of Object.entries(calls)) {
      await injectMany(name, call, warmUp, concurrency);
      const before = process.cpuUsage();
      await injectMany(name, call, count, concurrency);
      const used = process.cpuUsage(before);
      (micros[name] ??= []).push((used.user + used.system) / count);
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  return Object.fromEntries(Object.entries(micros).map(([name, values]) => [name, median(values)]));
}
