// Cost as data grows (issue 13): the same organisation with 1,000, 100,000 and 1,000,000 sections and wiki
// page versions (BENCH_SCALE_SIZES), grown through SQL in the server process (bench/scale-data.ts), and at
// each size the same requests: a list page, a page deep in a cursor walk, `updated_since` near the end, and
// a point read. Goal: each within 1.5 x its figure at the first size, by server CPU per request. With
// BENCH_ROUNDS > 1 every request is measured that many times at each size (the requests interleaved) and the
// median window counts. The plans the engine chose at each size are printed after the table
// (bench/scale-plans.ts).
//
// Only run when asked for, `BENCH_SCENARIOS=scale`: growing to a million rows takes minutes.
import type { DialectName } from '../src/db/database.ts';
import { summarise, type Measurement, type Sample, type Suite } from './measurement.ts';
import { measure } from './load.ts';
import { fixed, table } from './report.ts';
import type { ScalePaths } from './scale-data.ts';
import type { ServerHandle } from './server-process.ts';
import type { BenchSettings } from './settings.ts';

const MAX_RATIO = 1.5;

const queries: Array<{ name: string; path: keyof Omit<ScalePaths, 'size'> }> = [
  { name: 'GET /sections (first page)', path: 'sectionsList' },
  { name: 'GET /sections?cursor= (100 rows from the end)', path: 'sectionsDeepPage' },
  { name: 'GET /sections?updated_since= (100 rows from the end)', path: 'sectionsUpdatedSince' },
  { name: 'GET /sections/{id}', path: 'sectionRead' },
  { name: 'GET /wiki_pages/{id}/versions (first page)', path: 'versionsList' },
  { name: 'GET /wiki_pages/{id}/versions?cursor= (100 from the end)', path: 'versionsDeepPage' },
  { name: 'GET /wiki_pages/{id}/versions/{version}', path: 'versionRead' },
];

interface ScaleRow {
  dialect: DialectName;
  query: string;
  size: number;
  /** The median window by server CPU per request. */
  sample: Sample;
  /** Non-2xx responses and errors over every window. */
  failures: number;
  growMs: number;
}

const rows: ScaleRow[] = [];
const plans: Array<{ dialect: DialectName; size: number; query: string; plan: string[] }> = [];

export const scaleSuite: Suite = {
  name: 'scale',
  async run(server: ServerHandle, settings: BenchSettings, progress: (text: string) => void): Promise<Measurement[]> {
    if (!settings.scenarios?.has('scale')) return [];
    const { host, apiKey } = server.fixture.scale;
    const headers = { host, authorization: `Bearer ${apiKey}` };
    for (const size of settings.scaleSizes) {
      progress(`growing the scale organisation to ${size.toLocaleString('en')} sections and wiki page versions`);
      const started = performance.now();
      const paths = (await server.command(`scale-grow ${size}`)) as unknown as ScalePaths;
      const growMs = performance.now() - started;
      const samples = new Map(queries.map((q) => [q, [] as Sample[]]));
      for (let round = 1; round <= settings.rounds; round++) {
        for (const q of queries) {
          progress(`${size.toLocaleString('en')} rows${settings.rounds > 1 ? `, round ${round}/${settings.rounds}` : ''}: ${q.name}: ${settings.warmupSeconds} s warm-up, ${settings.seconds} s measured`);
          const profileName = `${server.dialect}-scale-${size}-${q.path}-r${round}`;
          samples.get(q)!.push(await measure(server, [{ method: 'GET', path: paths[q.path], headers }], settings, { profileName }));
        }
      }
      for (const q of queries) {
        const summary = summarise(samples.get(q)!);
        rows.push({ dialect: server.dialect, query: q.name, size, sample: summary.median, failures: summary.non2xx + summary.errors, growMs });
      }
      const found = ((await server.command(`scale-plans ${queries.map((q) => paths[q.path]).join(' ')}`)).plans ?? {}) as Record<string, string[]>;
      for (const q of queries) plans.push({ dialect: server.dialect, size, query: q.name, plan: found[paths[q.path]] ?? [] });
    }
    return [];
  },
  report() {
    if (rows.length === 0) return undefined;
    const lines: string[] = [];
    let failed = false;
    const cells = rows.map((r) => {
      const reference = rows.find((b) => b.dialect === r.dialect && b.query === r.query)!;
      const ratio = r.sample.serverMicrosPerRequest / reference.sample.serverMicrosPerRequest;
      const { failures } = r;
      if (failures > 0) {
        failed = true;
        lines.push(`FAIL ${r.dialect} ${r.query} at ${r.size} rows: ${failures} non-2xx responses or errors`);
      } else if (ratio > MAX_RATIO) {
        lines.push(`note ${r.dialect} ${r.query} at ${r.size} rows: ${fixed(ratio, 2)} x its figure at ${reference.size} rows, goal ${MAX_RATIO}`);
      }
      const verdict = r === reference ? 'reference' : `${fixed(ratio, 2)} ${failures > 0 ? 'void: failures' : ratio <= MAX_RATIO ? 'met' : 'MISSED'}`;
      return [r.dialect, r.query, r.size.toLocaleString('en'), fixed(r.sample.requestsPerSecond, 0), fixed(r.sample.p50Ms, 2), fixed(r.sample.p99Ms, 2), fixed(r.sample.serverMicrosPerRequest, 0), verdict];
    });
    const grown = [...new Map(rows.map((r) => [`${r.dialect} ${r.size}`, r])).values()].map((r) => `${r.dialect} ${r.size.toLocaleString('en')}: ${fixed(r.growMs / 1000, 1)} s`);
    const planText = plans.map((p) => [`${p.dialect}, ${p.size.toLocaleString('en')} rows, ${p.query}:`, ...p.plan.map((l) => `  ${l}`)].join('\n'));
    const text = [
      table(['database', 'request', 'rows', 'req/s', 'p50 ms', 'p99 ms', 'server us/req', `x first size (goal <= ${MAX_RATIO})`], cells),
      '',
      'server us/req: CPU time of the server process per response; x first size: divided by the same request\'s figure at the first size.',
      `Growing the data through SQL took: ${grown.join('; ')}.`,
      '',
      'Plans chosen at each size (the organisation and key lookups every request makes are left out):',
      ...planText,
    ].join('\n');
    return { text, lines, failed };
  },
};
