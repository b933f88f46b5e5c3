// The benchmark's knobs, read once from the environment. Defaults give a run of about a minute that is
// stable enough to compare two commits on the same machine; BENCH_SECONDS=3 is a quick smoke run.
export interface BenchSettings {
  /** Measured seconds per scenario. */
  seconds: number;
  /** Seconds of load before each measurement, not counted: JIT, statement caches and pools settle first. */
  warmupSeconds: number;
  connections: number;
  /** Times every scenario is measured, interleaved; the report shows the median round and the spread. */
  rounds: number;
  /** PostgreSQL to benchmark against; probed, and skipped (with a note) when it does not answer. */
  postgresUrl: string | undefined;
  /** Which databases to run, from 'sqlite' and 'postgres'. */
  databases: Set<string>;
  /** Only these scenarios (by name, e.g. `read`), or every scenario when undefined: for profiling one path. */
  scenarios: Set<string> | undefined;
  /** Directory for a .cpuprofile (and a .txt summary) of each measured window of the server, or undefined. */
  cpuProfileDir: string | undefined;
  /** Exit non-zero when a throughput goal is missed (for CI); by default goals are only reported. */
  enforceGoals: boolean;
  /**
   * The log levels every HTTP scenario is measured at, the first one's figures judged against the goals, the
   * others shown beside them: `warn` (only problems logged) and `info` (as shipped: an access line a request).
   */
  logLevels: string[];
  /** The scale suite's sizes (rows of each table measured), smallest first: the first is the reference. */
  scaleSizes: number[];
}

function positiveNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, not ${JSON.stringify(raw)}`);
  return value;
}

function scaleSizes(raw: string): number[] {
  const sizes = raw.split(',').map((s) => Number(s.trim()));
  if (sizes.some((n) => !Number.isInteger(n) || n < 1000) || sizes.some((n, i) => i > 0 && n <= sizes[i - 1])) {
    throw new Error(`BENCH_SCALE_SIZES must be increasing whole numbers of at least 1000, not ${JSON.stringify(raw)}`);
  }
  return sizes;
}

function logLevels(raw: string): string[] {
  const levels = raw.split(',').map((s) => s.trim()).filter(Boolean);
  const known = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
  if (levels.length === 0 || levels.some((l) => !known.includes(l))) throw new Error(`BENCH_LOG_LEVELS must name pino levels (${known.join(', ')}), not ${JSON.stringify(raw)}`);
  return levels;
}

export function readSettings(): BenchSettings {
  const databases = new Set((process.env.BENCH_DATABASES ?? 'sqlite,postgres').split(',').map((s) => s.trim()).filter(Boolean));
  for (const d of databases) if (d !== 'sqlite' && d !== 'postgres') throw new Error(`BENCH_DATABASES: unknown database ${d}`);
  const postgresUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  return {
    seconds: positiveNumber('BENCH_SECONDS', 5),
    // Two seconds: SQLite's checkpoint thread, stopped after 30 s without writes (another scenario's window), starts
    // again a second into the next write load; with one, its start and SQLite's own checkpoints before it fell in
    // the measured window (bench/README.md: the PATCH 56-60 µs in the goal run against 50 in steady state).
    warmupSeconds: positiveNumber('BENCH_WARMUP_SECONDS', 2),
    connections: Math.round(positiveNumber('BENCH_CONNECTIONS', 10)),
    rounds: Math.round(positiveNumber('BENCH_ROUNDS', 1)),
    postgresUrl: postgresUrl === '' ? undefined : postgresUrl,
    databases,
    scenarios: process.env.BENCH_SCENARIOS ? new Set(process.env.BENCH_SCENARIOS.split(',').map((s) => s.trim())) : undefined,
    cpuProfileDir: process.env.BENCH_CPU_PROF || undefined,
    enforceGoals: process.env.BENCH_ENFORCE_GOALS === '1' || process.env.BENCH_ENFORCE_GOALS === 'true',
    logLevels: logLevels(process.env.BENCH_LOG_LEVELS ?? 'warn,info'),
    scaleSizes: scaleSizes(process.env.BENCH_SCALE_SIZES ?? '1000,100000,1000000'),
  };
}
