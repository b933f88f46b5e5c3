// `npm run bench`: for each database (SQLite always; PostgreSQL when it answers), start the real app in a
// server process on a fresh database, run every suite against it, then print one table and fail the run
// on any non-2xx response. See bench/README.md for the knobs and how to read the figures.
import os from 'node:os';
import type { DatabaseTarget } from './databases.ts';
import { postgresTarget, sqliteTarget } from './databases.ts';
import { httpSuite } from './http-scenarios.ts';
import { bulkSuite } from './bulk-scenarios.ts';
import { webhookSuite } from './webhook-scenarios.ts';
import { scaleSuite } from './scale-scenarios.ts';
import { rosterSuite } from './roster-scenarios.ts';
import { latencySuite } from './latency-scenarios.ts';
import type { Measurement, Suite } from './measurement.ts';
import { formatTable, verdict } from './report.ts';
import { derivedGoals } from './issue-goals.ts';
import { startServer } from './server-process.ts';
import { readSettings } from './settings.ts';

const suites: Suite[] = [httpSuite, bulkSuite, rosterSuite, webhookSuite, scaleSuite, latencySuite];

const settings = readSettings();
const log = (text: string) => process.stderr.write(text + '\n');

// Cleanups still owed, run on Ctrl-C too so that no bench schema or temp directory outlives the run.
const pending = new Set<() => Promise<void>>();
process.once('SIGINT', () => {
  log('interrupted; cleaning up');
  void Promise.allSettled([...pending].map((f) => f())).then(() => process.exit(130));
});

type Opener = () => Promise<DatabaseTarget | { unavailable: string }>;

// Openers, not targets: each database is created only when its turn comes, so a PostgreSQL schema does not
// sit there while SQLite is measured, and a failure on SQLite leaves nothing to drop.
function targets(): Opener[] {
  const list: Opener[] = [];
  if (settings.databases.has('sqlite')) list.push(async () => sqliteTarget());
  if (settings.databases.has('postgres')) {
    const url = settings.postgresUrl;
    list.push(async () => (url ? postgresTarget(url) : { unavailable: 'BENCH_DATABASE_URL is empty' }));
  }
  return list;
}

async function measureOn(target: DatabaseTarget): Promise<Measurement[]> {
  log(`${target.dialect}: ${target.description}`);
  const server = await startServer(target);
  const stop = () => server.stop();
  pending.add(stop);
  try {
    const results: Measurement[] = [];
    for (const suite of suites) results.push(...(await suite.run(server, settings, (text) => log(`  ${target.dialect} ${suite.name}: ${text}`))));
    return results;
  } finally {
    pending.delete(stop);
    await server.stop();
  }
}

const cpus = os.cpus();
log(`atrium bench: Node ${process.version}, ${cpus.length} x ${cpus[0]?.model ?? 'unknown CPU'}; ${settings.connections} connections, ${settings.warmupSeconds} s warm-up + ${settings.seconds} s per scenario`);

const measurements: Measurement[] = [];
const notes: string[] = [];
for (const open of targets()) {
  const target = await open();
  if ('unavailable' in target) {
    notes.push(`skipped: ${target.unavailable}`);
    log(notes.at(-1)!);
    continue;
  }
  const dispose = () => target.dispose();
  pending.add(dispose);
  try {
    measurements.push(...(await measureOn(target)));
  } finally {
    pending.delete(dispose);
    await target.dispose();
  }
}

const result = verdict(measurements, { enforceGoals: settings.enforceGoals });
if (measurements.length > 0) process.stdout.write(`\n${formatTable(measurements)}\n`);
const derived = derivedGoals(measurements);
if (derived) {
  process.stdout.write(`\n${derived.text}\n`);
  result.lines.push(...derived.lines);
}
for (const suite of suites) {
  const report = suite.report?.(settings);
  if (!report) continue;
  process.stdout.write(`\n${report.text}\n`);
  result.lines.push(...report.lines);
  result.failed ||= report.failed;
}
for (const line of [...notes, ...result.lines]) process.stdout.write(`${line}\n`);
if (result.failed) {
  process.stdout.write('\nbenchmark FAILED (see above)\n');
  process.exitCode = 1;
}
