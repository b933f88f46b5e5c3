// What SQLite's checkpoints cost the event loop under sustained writes, with and without the checkpoint thread
// (src/db/sqlite-checkpoints.ts): PATCHes spread over 1,000 sections through app.inject, ten at a time, on a
// fresh SQLite file each run; the runs alternate, thread and not, ROUNDS times (default 2). Reported per run:
// server µs per PATCH, the COMMIT statements' p99 and longest (a COMMIT that crosses SQLite's checkpoint mark
// copies the log into the file there and then, with two fsyncs), and the event loop's longest delay.
//
//   node bench/sqlite-stalls.ts            # PATCHES (default 30,000) per run
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { StatementSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { bootInjectHarness, injectMany, spreadPatch } from './inject-harness.ts';

const patches = Number(process.env.PATCHES ?? 30_000);
const rounds = Number(process.env.ROUNDS ?? 2);

// Every COMMIT on the service's connection, timed: the group commit's own (sqlite-group-commit.ts) and any other;
// and every BEGIN IMMEDIATE, which waits while the thread's RESTART checkpoint holds new writers back.
let commitTimes: number[] = [];
let beginTimes: number[] = [];
const run = StatementSync.prototype.run;
type Run = (this: StatementSync, ...parameters: unknown[]) => ReturnType<StatementSync['run']>;
StatementSync.prototype.run = function timedRun(this: StatementSync, ...parameters: unknown[]) {
  const times = this.sourceSQL === 'commit' ? commitTimes : this.sourceSQL === 'begin immediate' ? beginTimes : undefined;
  if (times === undefined) return (run as Run).apply(this, parameters);
  const started = performance.now();
  try {
    return (run as Run).apply(this, parameters);
  } finally {
    times.push(performance.now() - started);
  }
} as StatementSync['run'];

async function measure(checkpointThread: boolean): Promise<string> {
  const { app, fixture, close } = await bootInjectHarness('sqlite', () => {}, { checkpointThread });
  const patch = spreadPatch(app, fixture);
  const load = (count: number) => injectMany('PATCH', patch, count, 10);
  // Long enough for the thread to start (it samples the commit rate once a second).
  await load(5000);
  await sleep(1100);
  commitTimes = [];
  beginTimes = [];
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const before = process.cpuUsage();
  await load(patches);
  const used = process.cpuUsage(before);
  delay.disable();
  const times = commitTimes.sort((a, b) => a - b);
  const at = (q: number, of = times) => of[Math.min(of.length - 1, Math.floor(of.length * q))]!.toFixed(2);
  const begins = beginTimes.sort((a, b) => a - b);
  // How long the log has grown: a checkpoint that runs while writes go on may never catch up with them.
  const { log } = (await sql<{ log: number }>`PRAGMA wal_checkpoint(PASSIVE)`.execute(app.db)).rows[0]!;
  await close();
  return `${checkpointThread ? 'thread' : 'SQLite '}: ${((used.user + used.system) / patches).toFixed(0)} µs per PATCH; ${times.length} COMMITs, p99 ${at(0.99)} ms, longest ${at(1)} ms; BEGINs p99 ${at(0.99, begins)} ms, longest ${at(1, begins)} ms; event loop delayed at most ${(delay.max / 1e6).toFixed(1)} ms; the log ${log} frames`;
}

for (let round = 0; round < rounds; round++) {
  for (const thread of round % 2 === 0 ? [true, false] : [false, true]) process.stdout.write(`${await measure(thread)}\n`);
}
