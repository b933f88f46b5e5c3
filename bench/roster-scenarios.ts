// Roster sync (issue 22): what a student information system's nightly sync costs. One round: five new
// courses with a manual enrolment method each (through the API), then a first sync of 10,000 enrolments
// (2,000 seeded people × 5 courses) as `upsert`s in bulk requests of 500, one request at a time, as
// examples/roster-sync.ts sends them; then a resend of the same roster, which must change nothing.
// Goals: the first sync at ≥ 5,000 enrolments/s; the resend in ≤ 1/3 of the first sync's time.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { DialectName } from '../src/db/database.ts';
import type { Suite } from './measurement.ts';
import { ROSTER_PEOPLE } from './seed.ts';
import type { ServerHandle } from './server-process.ts';
import type { BenchSettings } from './settings.ts';
import { summariseProfile, type CpuProfile } from './profile-summary.ts';

const ROSTER_COURSES = 5;
const BATCH = 500;
const ROUNDS = 3;
const GOAL_FIRST_PER_SECOND = 5000;
const GOAL_RESEND_SHARE = 1 / 3;

function request(server: ServerHandle, method: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ ms: number; status: number; body: any }> {
  const { fixture } = server;
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.request(
      `${server.url}/api/v1${path}`,
      { method, headers: { host: fixture.host, authorization: `Bearer ${fixture.apiKey}`, 'content-type': 'application/json', 'idempotency-key': randomUUID(), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ ms: performance.now() - started, status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null') }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

async function created(server: ServerHandle, path: string, body: unknown): Promise<string> {
  const res = await request(server, 'POST', path, body);
  if (res.status !== 201) throw new Error(`roster-sync setup: POST ${path} answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
  return res.body.id;
}

/** Sends the roster in batches; the total wall time, and what is wrong if any operation did not answer `expected`. */
async function sync(server: ServerHandle, operations: unknown[], expected: (r: { status: number; unchanged?: boolean }) => boolean): Promise<{ ms: number; problem?: string }> {
  let ms = 0;
  let problem: string | undefined;
  for (let i = 0; i < operations.length; i += BATCH) {
    // What examples/roster-sync.ts sends: it only counts outcomes, so each success's `data` is just its id.
    const res = await request(server, 'POST', '/enrolments/bulk', { operations: operations.slice(i, i + BATCH) }, { prefer: 'return=minimal' });
    ms += res.ms;
    if (res.status !== 200) problem ??= `answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`;
    const wrong = (res.body?.results ?? []).find((r: { status: number; unchanged?: boolean }) => !expected(r));
    if (wrong) problem ??= `unexpected result ${JSON.stringify(wrong).slice(0, 300)}`;
  }
  return { ms, problem };
}

interface RosterRow {
  dialect: DialectName;
  firstMs: number;
  resendMs: number;
  /** The server process's own CPU time over each (median round), which the machine's load moves less than wall time. */
  firstCpuMs: number;
  resendCpuMs: number;
  problem: string | undefined;
}
const rows: RosterRow[] = [];
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];

export const rosterSuite: Suite = {
  name: 'roster-sync',
  async run(server, settings: BenchSettings, progress) {
    if (settings.scenarios && !settings.scenarios.has('roster-sync')) return [];
    const first: number[] = [];
    const resend: number[] = [];
    const firstCpu: number[] = [];
    const resendCpu: number[] = [];
    let problem: string | undefined;
    for (let round = 0; round < ROUNDS; round++) {
      const tag = `${process.pid}-${round}-${randomUUID().slice(0, 8)}`;
      const courses: Array<{ course_id: string; enrolment_method_id: string }> = [];
      for (let c = 0; c < ROSTER_COURSES; c++) {
        const course_id = await created(server, '/courses', { fullname: `Roster course ${tag} ${c}`, shortname: `R-${tag}-${c}` });
        courses.push({ course_id, enrolment_method_id: await created(server, '/enrolment_methods', { course_id, type: 'manual' }) });
      }
      // As a roster file lists them (one person's courses together), so each batch spans every course.
      const operations = server.fixture.rosterPersonIds.flatMap((user_id, i) =>
        courses.map((course, c) => ({ ref: `e${i}-${c}`, op: 'upsert', external_id: `roster-${tag}-${i}-${c}`, data: { ...course, user_id, role: 'student' } })),
      );
      const profiled = async (name: string, work: () => Promise<{ ms: number; problem?: string }>) => {
        // With BENCH_CPU_PROF, the last round's windows are profiled (bench/README.md, Profiling).
        const file = settings.cpuProfileDir && round === ROUNDS - 1 ? path.resolve(settings.cpuProfileDir, `${server.dialect}-roster-${name}.cpuprofile`) : undefined;
        if (file) await server.profileStart();
        const before = await server.cpu();
        const result = { ...(await work()), cpuMs: ((await server.cpu()).micros - before.micros) / 1000 };
        if (file) {
          await server.profileStop(file);
          fs.writeFileSync(file.replace(/\.cpuprofile$/, '.txt'), summariseProfile(JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile, operations.length / BATCH) + '\n');
        }
        return result;
      };
      const a = await profiled('first', () => sync(server, operations, (r) => r.status === 201));
      const b = await profiled('resend', () => sync(server, operations, (r) => r.status === 200 && r.unchanged === true));
      problem ??= a.problem ?? b.problem;
      first.push(a.ms);
      resend.push(b.ms);
      firstCpu.push(a.cpuMs);
      resendCpu.push(b.cpuMs);
      progress(`round ${round + 1}/${ROUNDS}: first sync ${(operations.length / (a.ms / 1000)).toFixed(0)}/s, resend ${(operations.length / (b.ms / 1000)).toFixed(0)}/s`);
    }
    rows.push({ dialect: server.dialect, firstMs: median(first), resendMs: median(resend), firstCpuMs: median(firstCpu), resendCpuMs: median(resendCpu), problem });
    return [];
  },
  report(settings) {
    if (rows.length === 0) return undefined;
    const total = ROSTER_PEOPLE * ROSTER_COURSES;
    const lines: string[] = [];
    let failed = false;
    const header = ['database', 'enrolments', 'first sync ms', 'first /s', 'resend ms', 'resend /s', 'resend / first', 'goals (>= 5000/s, <= 0.33)', 'server CPU ms first', 'resend', 'resend / first'];
    const cells = rows.map((r) => {
      const firstRate = total / (r.firstMs / 1000);
      const share = r.resendMs / r.firstMs;
      const met = firstRate >= GOAL_FIRST_PER_SECOND && share <= GOAL_RESEND_SHARE;
      if (r.problem) {
        failed = true;
        lines.push(`FAIL ${r.dialect} roster-sync: ${r.problem}`);
      } else if (!met) {
        if (settings.enforceGoals) failed = true;
        lines.push(`${settings.enforceGoals ? 'FAIL' : 'note'} ${r.dialect} roster-sync: ${firstRate.toFixed(0)}/s first, resend ${share.toFixed(2)} of it`);
      }
      return [
        r.dialect,
        String(total),
        r.firstMs.toFixed(0),
        firstRate.toFixed(0),
        r.resendMs.toFixed(0),
        (total / (r.resendMs / 1000)).toFixed(0),
        share.toFixed(2),
        r.problem ? 'void: failures' : met ? 'met' : 'MISSED',
        r.firstCpuMs.toFixed(0),
        r.resendCpuMs.toFixed(0),
        (r.resendCpuMs / r.firstCpuMs).toFixed(2),
      ];
    });
    const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
    const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
    const text = [
      line(header),
      widths.map((w) => '-'.repeat(w)).join('  '),
      ...cells.map(line),
      '',
      `Median of ${ROUNDS} rounds. first sync: ${total} upserts that create, in bulk requests of ${BATCH}, one at a time (wall time summed over the requests);`,
      'resend: the same requests again (new Idempotency-Keys), each upsert answering 200 `unchanged`.',
      "server CPU: the server process's own CPU time over the same requests (not the database server's, on PostgreSQL).",
    ].join('\n');
    return { text, lines, failed };
  },
};
