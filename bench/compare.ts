// `node bench/compare.ts <other checkout>`: this code beside another version of it, both measured in the same
// minutes. On a shared machine a run's figures move by 10-50 % with the load, so two runs one after the other
// cannot tell a 5 % change; here two server processes (each on its own fresh database, seeded alike) are up
// at once and every round measures each scenario on both in turn (which goes first alternates by round), so a
// busy spell lands on both.
// The other checkout needs its dependencies installed (or a node_modules link) and a bench/server.ts that
// speaks this protocol. Settings as `npm run bench` (BENCH_SCENARIOS, BENCH_ROUNDS, BENCH_DATABASES, …);
// only scenarios that send requests are compared. Beside the CPU ratios it prints the medians of the rounds' ratios of
// throughput and of p50 and p99 latency (this over other).
//
//   BENCH_SCENARIOS=bare-patch,patch BENCH_ROUNDS=5 node bench/compare.ts /tmp/before
import path from 'node:path';
import { postgresTarget, sqliteTarget, type DatabaseTarget } from './databases.ts';
import { httpScenarios } from './http-scenarios.ts';
import { measure } from './load.ts';
import type { Sample } from './measurement.ts';
import { startServer, type ServerHandle } from './server-process.ts';
import { readSettings } from './settings.ts';

const other = process.argv[2];
if (!other) throw new Error('usage: node bench/compare.ts <other checkout>');
const settings = readSettings();
const scenarios = httpScenarios.filter((s) => s.requests && (!settings.scenarios || settings.scenarios.has(s.name)));
const log = (text: string) => process.stderr.write(text + '\n');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function targetFor(dialect: string): Promise<DatabaseTarget | undefined> {
  if (dialect === 'sqlite') return sqliteTarget();
  const target = settings.postgresUrl ? await postgresTarget(settings.postgresUrl) : { unavailable: 'BENCH_DATABASE_URL is empty' };
  if ('unavailable' in target) log(`skipped postgres: ${target.unavailable}`);
  return 'unavailable' in target ? undefined : target;
}

const lines: string[] = [];
for (const dialect of settings.databases) {
  const targets: DatabaseTarget[] = [];
  const servers: ServerHandle[] = [];
  try {
    for (let i = 0; i < 2; i++) {
      const target = await targetFor(dialect);
      if (!target) break;
      targets.push(target);
    }
    if (targets.length < 2) continue;
    const versions = [
      { name: `other (${other})`, server: await startServer(targets[0], path.resolve(other, 'bench/server.ts')) },
      { name: 'this checkout', server: await startServer(targets[1]) },
    ];
    servers.push(...versions.map((v) => v.server));
    // Each version's samples per scenario, one a round.
    const samples = versions.map(() => new Map(scenarios.map((s) => [s.name, [] as Sample[]])));
    for (let round = 1; round <= settings.rounds; round++) {
      for (const scenario of scenarios) {
        // Each round starts with the other version than the round before: the one measured first can leave work
        // behind (its background jobs catching up with the window's events) that the second one's window shares.
        const order = round % 2 === 1 ? [0, 1] : [1, 0];
        for (const i of order) {
          const version = versions[i];
          log(`${dialect} round ${round}/${settings.rounds} ${scenario.name}: ${version.name}`);
          const sample = await measure(version.server, scenario.requests!(version.server.fixture), settings);
          if (sample.non2xx + sample.errors > 0) throw new Error(`${dialect} ${scenario.name} on ${version.name}: ${sample.non2xx} non-2xx, ${sample.errors} errors`);
          samples[i].get(scenario.name)!.push(sample);
        }
      }
    }
    for (const scenario of scenarios) {
      const [a, b] = samples.map((m) => m.get(scenario.name)!);
      // Round by round, so that each ratio compares the two versions under the same load.
      const ratiosOf = (figure: (sample: Sample) => number) => a.map((x, r) => figure(b[r]) / figure(x));
      const cpu = ratiosOf((s) => s.serverMicrosPerRequest);
      const figures = (label: string, figure: (sample: Sample) => number) => `${label} ${median(ratiosOf(figure)).toFixed(2)}`;
      lines.push(
        `${dialect.padEnd(8)}  ${scenario.name.padEnd(24)}  other ${median(a.map((s) => s.serverMicrosPerRequest)).toFixed(0).padStart(5)} µs  this ${median(b.map((s) => s.serverMicrosPerRequest)).toFixed(0).padStart(5)} µs  ` +
          `this/other median of rounds ${median(cpu).toFixed(3)} (rounds: ${cpu.map((r) => r.toFixed(2)).join(' ')}); ` +
          `${figures('req/s', (s) => s.requestsPerSecond)}, ${figures('p50', (s) => s.p50Ms)}, ${figures('p99', (s) => s.p99Ms)}`,
      );
    }
  } finally {
    for (const server of servers) await server.stop();
    for (const target of targets) await target.dispose();
  }
}
process.stdout.write(`${lines.join('\n')}\n`);
