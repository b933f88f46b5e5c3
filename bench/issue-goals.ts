// The goals of issue 23 that no single row's ratio can state, worked out from the rows of one run: a request's
// own share (the request minus the bare route minus its database work measured in the server, over the bare
// route) and the MCP call against the SDK alone plus one REST read. Printed under the table when the run
// measured what a goal needs (the goal run in bench/README.md, "Where things stand"); the totals' goals stay
// on their rows (http-scenarios.ts). The verdict is the medians'; beside it, the same figure worked out from each
// round's rows alone (round i of every scenario ran in the same minutes), to show how far the machine moved it.
import type { DialectName } from '../src/db/database.ts';
import type { Measurement } from './measurement.ts';
import { fixed, table } from './report.ts';

interface DerivedGoal {
  what: string;
  /** The scenarios it needs, all measured on the same database without failures. */
  needs: string[];
  /** The figure and the most it may be, from the rows' median µs per request. */
  judge(us: (scenario: string) => number): { figure: number; most: number; shown: string };
}

const ownShare = (request: string, bare: string, floor: string, most: number): DerivedGoal => ({
  what: `${request}: own share (${request} − ${bare} − ${floor}) / ${bare}`,
  needs: [request, bare, floor],
  judge(us) {
    const own = us(request) - us(bare) - us(floor);
    return { figure: own / us(bare), most, shown: `${fixed(own, 0)} µs / ${fixed(us(bare), 0)}` };
  },
});

const goals: DerivedGoal[] = [
  ownShare('read', 'bare', 'read-in-process', 1),
  ownShare('patch', 'bare-patch', 'patch-audited-in-process', 1.5),
  {
    what: 'mcp-read ≤ bare-mcp + read (µs)',
    needs: ['mcp-read', 'bare-mcp', 'read'],
    judge(us) {
      const most = us('bare-mcp') + us('read');
      return { figure: us('mcp-read'), most, shown: `${fixed(us('mcp-read'), 0)} vs ${fixed(us('bare-mcp'), 0)} + ${fixed(us('read'), 0)}` };
    },
  },
];

/** The derived goals this run can judge: a table, and a line for each one missed. */
export function derivedGoals(measurements: Measurement[]): { text: string; lines: string[] } | undefined {
  const rows: string[][] = [];
  const lines: string[] = [];
  const dialects = [...new Set(measurements.map((m) => m.dialect))] as DialectName[];
  for (const dialect of dialects) {
    const rowOf = new Map(measurements.filter((m) => m.dialect === dialect).map((m) => [m.scenario, m]));
    for (const goal of goals) {
      const needed = goal.needs.map((name) => rowOf.get(name));
      if (needed.some((m) => m === undefined || m.non2xx + m.errors > 0 || m.problem !== undefined)) continue;
      const { figure, most, shown } = goal.judge((name) => rowOf.get(name)!.median.serverMicrosPerRequest);
      const met = figure <= most;
      const digits = most >= 10 ? 0 : 2;
      const rounds = Math.min(...needed.map((m) => m!.roundMicros.length));
      const byRound = Array.from({ length: rounds }, (_, i) => goal.judge((name) => rowOf.get(name)!.roundMicros[i]!)).map((r) => `${fixed(r.figure, digits)} ≤ ${fixed(r.most, digits)}`);
      rows.push([dialect, goal.what, shown, `${fixed(figure, digits)} ≤ ${fixed(most, digits)}`, met ? 'met' : 'MISSED', rounds > 1 ? byRound.join(', ') : '']);
      if (!met) lines.push(`note ${dialect} ${goal.what}: ${fixed(figure, digits)}, goal ${fixed(most, digits)}`);
    }
  }
  if (rows.length === 0) return undefined;
  const text = `Issue 23's goals that need more than one row (median rounds; each round's own figure beside):\n${table(['database', 'goal', 'from', 'figure', 'verdict', 'round by round'], rows, ['left', 'left', 'left', 'left', 'left', 'left'])}`;
  return { text, lines };
}
