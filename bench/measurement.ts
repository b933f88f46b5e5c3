// What a scenario measures and what a suite of scenarios is, shared by the runner, the suites and the report.
import type { DialectName } from '../src/db/database.ts';
import type { BenchSettings } from './settings.ts';
import type { ServerHandle } from './server-process.ts';

/**
 * Largest server CPU per request, as a multiple of the baseline's measured in the same run on the same
 * database; a database without a figure gets the ratio shown without a verdict.
 */
export type Goal = Partial<Record<DialectName, number>>;

/** One measured window of one scenario. */
export interface Sample {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Responses that were not 2xx, warm-up included. */
  non2xx: number;
  /** Socket errors and timeouts, warm-up included. */
  errors: number;
  statusCounts: Record<string, number>;
  /** Server process CPU during the window, as a fraction of one core. */
  serverCpu: number;
  /** Server process CPU time per response in the window, microseconds: the figure goals are judged on. */
  serverMicrosPerRequest: number;
  /**
   * Of it, user time: JavaScript and native code, where the rest is the kernel's on the process's behalf (its
   * sockets, its files, its wake-ups). A request that costs more without making more system calls shows here
   * (bench/README.md, "Where things stand", 2026-11-30 sixth session).
   */
  serverUserMicrosPerRequest: number;
  /** Responses in the measured window. */
  requests: number;
  /** Load generator CPU during the window, as a fraction of one core. */
  loadCpu: number;
  /**
   * The server's voluntary context switches per response: how often it ran out of work and slept, to be woken
   * again (by a request, or by its database's answer). Each costs more than its system call on this machine
   * (bench/README.md, "Where things stand", 2026-11-30 third session).
   */
  sleepsPerRequest: number;
}

export interface Measurement {
  dialect: DialectName;
  suite: string;
  scenario: string;
  /** What was requested, e.g. `GET /healthz`. */
  route: string;
  /** The round with the median server CPU per request: shared machines drift, and a median ignores one bad round. */
  median: Sample;
  /** Cheapest and dearest round by server µs/request, to show how much the figures can be trusted. */
  minMicrosPerRequest: number;
  maxMicrosPerRequest: number;
  rounds: number;
  /** Server µs/request of each round, in the order the rounds ran (round i of every scenario ran in the same minutes). */
  roundMicros: number[];
  /** Summed over every round: any non-2xx response or socket error fails the whole run. */
  non2xx: number;
  errors: number;
  statusCounts: Record<string, number>;
  /** This row is a baseline others are divided by. */
  isBaseline: boolean;
  /** The scenario this one is divided by (`bare`, `bare-patch`), when it has one. */
  baselineName: string | undefined;
  /** Median server µs/request divided by the baseline's, on the same database. */
  ratio: number | undefined;
  goal: Goal | undefined;
  /** A post-run check that found the scenario did not do what it claims (e.g. PATCH wrote nothing). */
  problem: string | undefined;
  /** The same scenario at the other log levels of BENCH_LOG_LEVELS (median round), with the log lines it wrote a response. */
  atLogLevels?: Array<{ level: string; microsPerRequest: number; logLinesPerRequest: number }>;
}

/** A group of scenarios run against one started server. Later suites (idempotency, bulk, webhook delivery) add one of these. */
export interface Suite {
  name: string;
  run(server: ServerHandle, settings: BenchSettings, progress: (text: string) => void): Promise<Measurement[]>;
  /**
   * For suites whose figures are not request rates (bulk timings): their own table, printed after the main one,
   * with verdict lines; `failed` fails the run. Undefined when the suite measured nothing.
   */
  report?(settings: BenchSettings): { text: string; lines: string[]; failed: boolean } | undefined;
}

/** Folds the rounds of one scenario into its row (everything but the ratio, which needs the baseline's row). */
export function summarise(samples: Sample[]): Pick<Measurement, 'median' | 'minMicrosPerRequest' | 'maxMicrosPerRequest' | 'rounds' | 'roundMicros' | 'non2xx' | 'errors' | 'statusCounts'> {
  const sorted = [...samples].sort((a, b) => a.serverMicrosPerRequest - b.serverMicrosPerRequest);
  const statusCounts: Record<string, number> = {};
  for (const s of samples) for (const [status, n] of Object.entries(s.statusCounts)) statusCounts[status] = (statusCounts[status] ?? 0) + n;
  return {
    median: sorted[Math.floor((sorted.length - 1) / 2)],
    minMicrosPerRequest: sorted[0].serverMicrosPerRequest,
    maxMicrosPerRequest: sorted[sorted.length - 1].serverMicrosPerRequest,
    rounds: samples.length,
    roundMicros: samples.map((s) => s.serverMicrosPerRequest),
    non2xx: samples.reduce((n, s) => n + s.non2xx, 0),
    errors: samples.reduce((n, s) => n + s.errors, 0),
    statusCounts,
  };
}
