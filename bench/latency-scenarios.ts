// Latency over a network (issue 23): PostgreSQL 0.5 ms away in each direction (bench/relay.ts), one request at a
// time, so that every round trip a request makes to the database shows in its time as about 1 ms. On a fresh
// schema of its own, a second server process reaches PostgreSQL through the relay; the same requests are also
// timed against the run's own server (PostgreSQL on the same machine) for comparison. Reported: p50 and p99 of
// the read, the PATCH, the PATCH with a new Idempotency-Key, the read as an MCP tool call and an atomic bulk of
// 100 creates. Goals: p50 read
// ≤ 1.5 ms, PATCH ≤ 2 ms through the relay. Only with PostgreSQL (SQLite has no network).
import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { randomUUID } from 'node:crypto';
import type { Request } from 'autocannon';
import type { Measurement, Suite } from './measurement.ts';
import type { ServerHandle } from './server-process.ts';
import { startServer } from './server-process.ts';
import type { BenchSettings } from './settings.ts';
import { postgresTarget } from './databases.ts';
import { measure } from './load.ts';
import { authHeaders, getSectionCall } from './http-scenarios.ts';
import { creates } from './bulk-scenarios.ts';
import type { Fixture } from './seed.ts';
import { fixed, table } from './report.ts';

/** The relay's delay each way; BENCH_RELAY_DELAY_MS=0 measures what the relay costs by itself (its hops, its spinning core). */
export const RELAY_DELAY_MS = process.env.BENCH_RELAY_DELAY_MS === undefined ? 0.5 : Number(process.env.BENCH_RELAY_DELAY_MS);
const json = { 'content-type': 'application/json' };
let count = 0;

interface LatencyScenario {
  name: string;
  route: string;
  goalP50Ms?: number;
  requests(fixture: Fixture): Request[];
}

const spreadPatch = (fixture: Fixture, extra: (n: number) => Record<string, string>): Request[] => [
  {
    method: 'PATCH',
    path: `/api/v1/sections/${fixture.sectionId}`,
    headers: authHeaders(fixture, json),
    setupRequest: (request) => {
      const n = ++count;
      const id = fixture.spreadSectionIds[n % fixture.spreadSectionIds.length];
      return { ...request, path: `/api/v1/sections/${id}`, headers: { ...request.headers, ...extra(n) }, body: JSON.stringify({ title: `Relay #${n}` }) };
    },
  },
];

const scenarios: LatencyScenario[] = [
  { name: 'read', route: 'GET /api/v1/sections/{id}', goalP50Ms: 1.5, requests: (f) => [{ method: 'GET', path: `/api/v1/sections/${f.sectionId}`, headers: authHeaders(f) }] },
  { name: 'patch', route: 'PATCH /api/v1/sections/{id}', goalP50Ms: 2, requests: (f) => spreadPatch(f, () => ({})) },
  // The same read as an MCP tool call (2026-07-28): one round trip too, its organisation's check riding with it.
  { name: 'mcp-read', route: 'POST /mcp tools/call get_section', requests: (f) => getSectionCall(f, '/mcp', authHeaders(f)) },
  { name: 'patch-idempotent', route: 'PATCH + new Idempotency-Key', requests: (f) => spreadPatch(f, (n) => ({ 'idempotency-key': `relay-${process.pid}-${n}` })) },
  {
    name: 'bulk-atomic-100',
    route: 'POST /lesson_pages/bulk, 100 creates, atomic',
    requests: (f) => [
      {
        method: 'POST',
        path: '/api/v1/lesson_pages/bulk',
        headers: authHeaders(f, json),
        setupRequest: (request) => {
          const round = `relay-${process.pid}-${++count}`;
          return { ...request, headers: { ...request.headers, 'idempotency-key': randomUUID() }, body: JSON.stringify({ operations: creates(f.bulkLessonId, 100, round), atomic: true }) };
        },
      },
    ],
  },
];

/** The relay in a process of its own, in front of `url`'s server; `url` rewritten to go through it. */
async function startRelay(url: string): Promise<{ url: string; delay(ms: number): Promise<void>; stop(): void }> {
  const target = new URL(url);
  const child = spawn(process.execPath, [path.join(import.meta.dirname, 'relay.ts'), target.hostname, target.port || '5432'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = readline.createInterface({ input: child.stdout });
  const next = () => new Promise<Record<string, number>>((resolve) => lines.once('line', (line) => resolve(JSON.parse(line) as Record<string, number>)));
  const port = await Promise.race([next().then((m) => m.port), new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`the relay exited (${code})`))))]);
  const relayed = new URL(url);
  relayed.hostname = '127.0.0.1';
  relayed.port = String(port);
  return {
    url: relayed.toString(),
    async delay(ms) {
      const answered = next();
      child.stdin.write(`delay ${ms}\n`);
      await answered;
    },
    stop: () => child.stdin.end(),
  };
}

interface Row {
  scenario: LatencyScenario;
  direct: { p50: number; p99: number; n: number };
  relayed: { p50: number; p99: number; n: number };
  failures: number;
}
const rows: Row[] = [];

export const latencySuite: Suite = {
  name: 'latency',
  async run(server: ServerHandle, settings: BenchSettings, progress: (text: string) => void): Promise<Measurement[]> {
    if (server.dialect !== 'postgres' || !settings.postgresUrl) return [];
    const selected = scenarios.filter(() => !settings.scenarios || settings.scenarios.has('latency'));
    if (selected.length === 0) return [];
    const target = await postgresTarget(settings.postgresUrl);
    if ('unavailable' in target) return [];
    const relay = await startRelay(settings.postgresUrl);
    const one = { ...settings, connections: 1 };
    try {
      // Migrated and seeded at local speed; the delay applies from the first measured request on.
      const far = await startServer({ ...target, env: { ...target.env, BENCH_DATABASE_URL: relay.url } });
      await relay.delay(RELAY_DELAY_MS);
      try {
        for (const scenario of selected) {
          progress(`${scenario.route}: one at a time, direct and through the ${RELAY_DELAY_MS} ms relay`);
          const direct = await measure(server, scenario.requests(server.fixture), one);
          const relayed = await measure(far, scenario.requests(far.fixture), one);
          rows.push({
            scenario,
            direct: { p50: direct.p50Ms, p99: direct.p99Ms, n: direct.requests },
            relayed: { p50: relayed.p50Ms, p99: relayed.p99Ms, n: relayed.requests },
            failures: direct.non2xx + direct.errors + relayed.non2xx + relayed.errors,
          });
        }
      } finally {
        await far.stop();
      }
    } finally {
      relay.stop();
      await target.dispose();
    }
    return [];
  },
  report() {
    if (rows.length === 0) return undefined;
    const lines: string[] = [];
    let failed = false;
    const body = rows.map((r) => {
      const goal = r.scenario.goalP50Ms;
      if (r.failures > 0) {
        failed = true;
        lines.push(`FAIL latency ${r.scenario.route}: ${r.failures} non-2xx responses or errors`);
      }
      if (goal !== undefined && r.relayed.p50 > goal) lines.push(`note latency ${r.scenario.route}: p50 ${fixed(r.relayed.p50, 2)} ms through the relay, goal ${goal} ms`);
      return [r.scenario.route, fixed(r.direct.p50, 2), fixed(r.direct.p99, 2), fixed(r.relayed.p50, 2), fixed(r.relayed.p99, 2), String(r.relayed.n), goal === undefined ? '' : `p50 <= ${goal} ${r.relayed.p50 <= goal ? 'met' : 'MISSED'}`];
    });
    const text = table(['postgres, one request at a time', 'local p50 ms', 'local p99 ms', `relay p50 ms`, 'relay p99 ms', 'requests', 'goal'], body);
    return { text: `${text}\n\nrelay: PostgreSQL reached through bench/relay.ts, ${RELAY_DELAY_MS} ms each way (a round trip ≈ ${2 * RELAY_DELAY_MS} ms); local: the run's own server, PostgreSQL on this machine.`, lines, failed };
  },
};
