// Turns measurements into the printed table and the run's verdict. Non-2xx responses, socket errors and
// failed post-run checks always fail the run: a benchmark of error responses measures nothing.
import type { Measurement } from './measurement.ts';

type Align = 'left' | 'right';

export function table(headers: string[], rows: string[][], align: Align[] = headers.map((_, i) => (i < 2 ? 'left' : 'right'))): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (align[i] === 'left' ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ').trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export const fixed = (n: number, digits: number) => n.toFixed(digits);
const percent = (fraction: number) => `${Math.round(fraction * 100)}%`;

const failedRow = (m: Measurement) => m.non2xx + m.errors > 0 || m.problem !== undefined;

/** The goal's largest ratio on this row's database, if it has one there. */
const goalFor = (m: Measurement) => m.goal?.[m.dialect];

export function goalMet(m: Measurement): boolean | undefined {
  // A rate of error responses says nothing about the goal.
  const max = goalFor(m);
  if (failedRow(m) || max === undefined || m.ratio === undefined) return undefined;
  return m.ratio <= max;
}

function goalCell(m: Measurement): string {
  if (!m.goal) return '';
  const max = goalFor(m);
  if (max === undefined) return '';
  if (failedRow(m)) return 'void: failures';
  if (m.ratio === undefined) return 'no baseline run';
  return `<= ${fixed(max, 1)} ${goalMet(m) ? 'met' : 'MISSED'}`;
}

export function formatTable(measurements: Measurement[]): string {
  const manyRounds = measurements.some((m) => m.rounds > 1);
  const otherLevels = [...new Set(measurements.flatMap((m) => (m.atLogLevels ?? []).map((a) => a.level)))];
  const rows = measurements.map((m) => [
    m.dialect,
    m.route,
    fixed(m.median.requestsPerSecond, 0),
    fixed(m.median.p50Ms, 2),
    fixed(m.median.p99Ms, 2),
    fixed(m.median.serverMicrosPerRequest, 0),
    fixed(m.median.serverUserMicrosPerRequest, 0),
    ...(manyRounds ? [`${fixed(m.minMicrosPerRequest, 0)}-${fixed(m.maxMicrosPerRequest, 0)}`] : []),
    ...otherLevels.map((level) => {
      const at = m.atLogLevels?.find((a) => a.level === level);
      return at ? `${fixed(at.microsPerRequest, 0)} (${fixed(at.logLinesPerRequest, 2)} lines)` : '';
    }),
    m.ratio === undefined ? (m.isBaseline ? 'baseline' : '') : `${fixed(m.ratio, 2)} x ${m.baselineName}`,
    goalCell(m),
    String(m.non2xx + m.errors),
    percent(m.median.serverCpu),
    percent(m.median.loadCpu),
    fixed(m.median.sleepsPerRequest, 2),
  ]);
  const headers = ['database', 'route', 'req/s', 'p50 ms', 'p99 ms', 'server us/req', 'of it user', ...(manyRounds ? ['us/req range'] : []), ...otherLevels.map((l) => `us/req at ${l}`), 'x baseline (CPU)', 'goal', 'non-2xx+err', 'server CPU', 'load CPU', 'sleeps/req'];
  const align: Align[] = headers.map((h, i) => (i < 2 || h === 'goal' || h === 'x baseline (CPU)' ? 'left' : 'right'));
  const legend = [
    'server us/req: CPU time of the server process per response (user + system), the figure the goals are judged on; of it user: its user time, the rest the kernel\'s on its behalf.',
    'x baseline (CPU): server us/req divided by its baseline\'s (bare: GET /healthz; bare-patch: a PATCH with a JSON body to a bare route; read: the API-key read, for the OAuth and MCP reads; patch-in-process: the PATCH\'s transaction without its audit entry), same run, same database.',
    'server CPU / load CPU: share of one core the server process / autocannon used while measuring.',
    'sleeps/req: the server\'s voluntary context switches per response, the times it ran out of work and was woken again.',
    ...(otherLevels.length > 0
      ? [`Every figure but "us/req at …" is at the first of BENCH_LOG_LEVELS (warn by default); "us/req at ${otherLevels.join('/')}": the same scenario with the app logging at that level to a pipe, and the log lines it wrote per response.`]
      : []),
    ...(manyRounds ? [`Figures are from the median round by server us/req of ${Math.max(...measurements.map((m) => m.rounds))} interleaved rounds; non-2xx+err sums all rounds.`] : []),
  ];
  return `${table(headers, rows, align)}\n\n${legend.join('\n')}`;
}

export interface Verdict {
  failed: boolean;
  lines: string[];
}

export function verdict(measurements: Measurement[], options: { enforceGoals: boolean }): Verdict {
  const lines: string[] = [];
  let failed = false;
  for (const m of measurements) {
    const where = `${m.dialect} ${m.route}`;
    if (m.non2xx > 0 || m.errors > 0) {
      failed = true;
      const statuses = Object.entries(m.statusCounts).map(([s, n]) => `${s}: ${n}`).join(', ');
      lines.push(`FAIL ${where}: ${m.non2xx} non-2xx responses and ${m.errors} socket errors/timeouts (statuses ${statuses || 'none'})`);
    }
    if (m.problem) {
      failed = true;
      lines.push(`FAIL ${where}: ${m.problem}`);
    }
    if (goalMet(m) === false) {
      if (options.enforceGoals) failed = true;
      lines.push(`${options.enforceGoals ? 'FAIL' : 'note'} ${where}: ${fixed(m.ratio!, 2)} x ${m.baselineName} by CPU, goal ${fixed(goalFor(m)!, 1)}`);
    }
  }
  return { failed, lines };
}
