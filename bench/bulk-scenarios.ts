// Bulk lesson pages (spec operation 9): how long a 500-create bulk, a 500-upsert bulk over existing pages and a
// 100-create atomic bulk take, each beside the same number of lesson-page rows inserted raw in one transaction
// (bench/raw-lesson-pages.ts), measured in the same run, on the same database, in the same server process.
// Raw and bulk alternate, one of each per iteration, so that a slow spell of the machine hits both alike.
// Goals (issue 5): non-atomic 500 creates ≤ 4 × raw; atomic 100 ≤ 3 × raw.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { DialectName } from '../src/db/database.ts';
import type { Measurement, Suite } from './measurement.ts';
import { benchPageContents } from './raw-lesson-pages.ts';
import type { Fixture } from './seed.ts';
import type { ServerHandle } from './server-process.ts';
import type { BenchSettings } from './settings.ts';

interface BulkScenario {
  name: string;
  route: string;
  count: number;
  atomic: boolean;
  /** Largest acceptable bulk time as a multiple of the raw insert's. */
  maxRatio?: number;
  operations(fixture: Fixture, round: string): unknown[];
}

export const creates = (lessonId: string, count: number, round: string) =>
  Array.from({ length: count }, (_, i) => ({ ref: `p${i}`, op: 'create', data: { lesson_id: lessonId, title: `Bulk ${round} #${i}`, contents: benchPageContents } }));

export const bulkScenarios: BulkScenario[] = [
  {
    name: 'bulk-create-500',
    route: 'POST /lesson_pages/bulk, 500 creates',
    count: 500,
    atomic: false,
    maxRatio: 4,
    operations: (f, round) => creates(f.bulkLessonId, 500, round),
  },
  {
    name: 'bulk-upsert-500',
    route: 'POST /lesson_pages/bulk, 500 upserts of existing pages',
    count: 500,
    atomic: false,
    // Every round gives each page a new title, so that every upsert really updates.
    operations: (f, round) =>
      f.upsertExternalIds.map((external_id, i) => ({ ref: `u${i}`, op: 'upsert', external_id, data: { lesson_id: f.upsertLessonId, title: `Upserted ${round} #${i}`, contents: benchPageContents } })),
  },
  {
    name: 'bulk-atomic-100',
    route: 'POST /lesson_pages/bulk, 100 creates, atomic',
    count: 100,
    atomic: true,
    maxRatio: 3,
    operations: (f, round) => creates(f.bulkLessonId, 100, round),
  },
];

const MIN_ITERATIONS = 5;
const MAX_ITERATIONS = 200;

interface BulkRow {
  dialect: DialectName;
  scenario: BulkScenario;
  iterations: number;
  bulkMs: number;
  rawMs: number;
  /** Server CPU per bulk request, ms. */
  bulkCpuMs: number;
  problem: string | undefined;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
};

/** Sends one bulk request; resolves with its wall time (until the last byte) and the parsed body. */
function postBulk(server: ServerHandle, body: string): Promise<{ ms: number; status: number; body: any }> {
  const { fixture } = server;
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.request(
      `${server.url}/api/v1/lesson_pages/bulk`,
      {
        method: 'POST',
        headers: { host: fixture.host, authorization: `Bearer ${fixture.apiKey}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const ms = performance.now() - started;
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ ms, status: res.statusCode ?? 0, body: text === '' ? undefined : JSON.parse(text) });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** What is wrong with a bulk response that should have succeeded in full, if anything. */
function checkResponse(scenario: BulkScenario, status: number, body: any): string | undefined {
  if (status !== 200) return `answered ${status}: ${JSON.stringify(body).slice(0, 300)}`;
  if (body?.summary?.succeeded !== scenario.count) {
    const failed = (body?.results ?? []).find((r: { status: number }) => r.status >= 300);
    return `${body?.summary?.failed} of ${scenario.count} operations failed, e.g. ${JSON.stringify(failed).slice(0, 300)}`;
  }
  return undefined;
}

let iterationCounter = 0;

async function iterate(server: ServerHandle, scenario: BulkScenario): Promise<{ bulkMs: number; rawMs: number; cpuMs: number; problem?: string }> {
  const round = `${process.pid}-${++iterationCounter}`;
  const rawMs = await server.rawLessonPages(scenario.count, round);
  const body = JSON.stringify({ operations: scenario.operations(server.fixture, round), ...(scenario.atomic ? { atomic: true } : {}) });
  const cpuBefore = await server.cpu();
  const res = await postBulk(server, body);
  const cpuAfter = await server.cpu();
  return { bulkMs: res.ms, rawMs, cpuMs: (cpuAfter.micros - cpuBefore.micros) / 1000, problem: checkResponse(scenario, res.status, res.body) };
}

const rows: BulkRow[] = [];

const fixed = (n: number, digits: number) => n.toFixed(digits);

function table(headers: string[], cells: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i].length)));
  const line = (r: string[]) => r.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ').trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
}

export const bulkSuite: Suite = {
  name: 'bulk',
  async run(server: ServerHandle, settings: BenchSettings, progress: (text: string) => void): Promise<Measurement[]> {
    const selected = bulkScenarios.filter((s) => !settings.scenarios || settings.scenarios.has(s.name));
    for (const scenario of selected) {
      progress(`${scenario.route}: ${settings.warmupSeconds} s warm-up, ${settings.seconds} s measured (at least ${MIN_ITERATIONS} iterations)`);
      let problem: string | undefined;
      const warmUntil = performance.now() + settings.warmupSeconds * 1000;
      do problem ??= (await iterate(server, scenario)).problem;
      while (performance.now() < warmUntil);
      const bulk: number[] = [];
      const raw: number[] = [];
      const cpu: number[] = [];
      const until = performance.now() + settings.seconds * 1000;
      while ((bulk.length < MIN_ITERATIONS || performance.now() < until) && bulk.length < MAX_ITERATIONS) {
        const it = await iterate(server, scenario);
        problem ??= it.problem;
        bulk.push(it.bulkMs);
        raw.push(it.rawMs);
        cpu.push(it.cpuMs);
      }
      rows.push({ dialect: server.dialect, scenario, iterations: bulk.length, bulkMs: median(bulk), rawMs: median(raw), bulkCpuMs: median(cpu), problem });
    }
    // The figures are times, not request rates: they go to this suite's own table (`report`), not the main one.
    return [];
  },
  report(settings: BenchSettings) {
    if (rows.length === 0) return undefined;
    const lines: string[] = [];
    let failed = false;
    const cells = rows.map((r) => {
      const ratio = r.bulkMs / r.rawMs;
      const goal = r.scenario.maxRatio === undefined ? '' : `<= ${fixed(r.scenario.maxRatio, 1)} ${r.problem ? 'void: failures' : ratio <= r.scenario.maxRatio ? 'met' : 'MISSED'}`;
      if (r.problem) {
        failed = true;
        lines.push(`FAIL ${r.dialect} ${r.scenario.route}: ${r.problem}`);
      } else if (r.scenario.maxRatio !== undefined && ratio > r.scenario.maxRatio) {
        if (settings.enforceGoals) failed = true;
        lines.push(`${settings.enforceGoals ? 'FAIL' : 'note'} ${r.dialect} ${r.scenario.route}: ${fixed(ratio, 2)} x raw, goal ${fixed(r.scenario.maxRatio, 1)}`);
      }
      return [r.dialect, r.scenario.route, String(r.scenario.count), fixed(r.bulkMs, 1), fixed(r.bulkCpuMs, 1), fixed(r.rawMs, 1), fixed(ratio, 2), goal, String(r.iterations)];
    });
    const text = [
      table(['database', 'bulk request', 'ops', 'bulk ms', 'server CPU ms', `raw ms`, 'x raw', 'goal (x raw)', 'iterations'], cells),
      '',
      'bulk ms: median wall time of one bulk request, sent by this process until its last byte arrived; server CPU ms: the server process’s CPU during it.',
      'raw ms: median time the server process took to insert as many lesson-page rows with plain Kysely statements in one transaction (bench/raw-lesson-pages.ts).',
      'x raw: bulk ms divided by raw ms.',
    ].join('\n');
    return { text, lines, failed };
  },
};
