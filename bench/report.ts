// Turns measurements into the printed table and the run's verdict. Non-2xx responses, socket errors and
// failed post-run checks always fail the run: a benchmark of error responses measures nothing.
import type { Measurement } from './measurement.ts';

type Align = 'left' | 'right';

function table(headers: string[], rows: string[][], align: Align[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (align[i] === 'left' ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ').trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const fixed = (n: number, digits: number) => n.toFixed(digits);
const percent = (fraction: number) => `${Math.round(fraction * 100)}%`;

const failedRow = (m: Measurement) => m.non2xx + m.errors > 0 || m.problem !== undefined;

export function goalMet(m: Measurement): boolean | undefined {
  // A rate of error responses says nothing about the goal.
  if (failedRow(m)) return undefined;
  if (!m.goal || m.ratio === undefined || !m.goal.dialects.includes(m.dialect)) return undefined;
  return m.ratio >= m.goal.minRatio;
}

function goalCell(m: Measurement): string {
  if (!m.goal) return '';
  if (failedRow(m)) return 'void: failures';
  if (m.ratio === undefined) return 'no baseline run';
  const met = goalMet(m);
  const target = `>= ${fixed(m.goal.minRatio, 2)}`;
  if (met === undefined) return `(${target} on ${m.goal.dialects.join(', ')})`;
  return `${target} ${met ? 'met' : 'MISSED'}`;
}

const microsPerRequest = (m: Measurement) => (m.median.serverCpu * 1e6) / m.median.requestsPerSecond;

/** Bare's server CPU per request over this route's: the req/s ratio a saturated server would show. */
function cpuRatio(m: Measurement, measurements: Measurement[]): number | undefined {
  const base = measurements.find((b) => b.baseline && b.suite === m.suite && b.dialect === m.dialect);
  return base ? microsPerRequest(base) / microsPerRequest(m) : undefined;
}

export function formatTable(measurements: Measurement[]): string {
  const baseRoutes = [...new Set(measurements.filter((m) => m.baseline).map((m) => m.route))].join(', ');
  const manyRounds = measurements.some((m) => m.rounds > 1);
  const rows = measurements.map((m) => [
    m.dialect,
    m.route,
    fixed(m.median.requestsPerSecond, 0),
    ...(manyRounds ? [`${fixed(m.minRequestsPerSecond, 0)}-${fixed(m.maxRequestsPerSecond, 0)}`] : []),
    fixed(m.median.p50Ms, 1),
    fixed(m.median.p99Ms, 1),
    m.ratio === undefined ? '' : fixed(m.ratio, 2),
    goalCell(m),
    String(m.non2xx + m.errors),
    percent(m.median.serverCpu),
    fixed(microsPerRequest(m), 0),
    ((r) => (r === undefined ? '' : fixed(r, 2)))(cpuRatio(m, measurements)),
    percent(m.median.loadCpu),
  ]);
  const headers = ['database', 'route', 'req/s', ...(manyRounds ? ['req/s range'] : []), 'p50 ms', 'p99 ms', 'x bare', 'goal (x bare)', 'non-2xx+err', 'server CPU', 'server us/req', 'x bare by CPU', 'load CPU'];
  const align: Align[] = headers.map((_, i) => (i < 2 || headers[i] === 'goal (x bare)' ? 'left' : 'right'));
  const legend = [
    `x bare: requests/s divided by ${baseRoutes || 'the baseline'}'s on the same database.`,
    'server CPU / load CPU: share of one core the server process / autocannon used while measuring; server us/req: server CPU time per request.',
    "x bare by CPU: bare's server us/req divided by the route's, the x bare a fully busy server would show (steadier on a noisy machine).",
    ...(manyRounds ? [`Figures are from the median of ${Math.max(...measurements.map((m) => m.rounds))} interleaved rounds; non-2xx+err sums all rounds.`] : []),
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
      lines.push(`${options.enforceGoals ? 'FAIL' : 'note'} ${where}: ${fixed(m.ratio!, 2)} x bare, goal ${fixed(m.goal!.minRatio, 2)}`);
    }
    if (m.baseline && m.median.loadCpu > 0.9 && m.median.serverCpu < 0.9) {
      lines.push(`note ${where}: the load generator, not the server, was saturated; the baseline (and so every ratio) understates the server`);
    }
  }
  return { failed, lines };
}
