// The floor under the PATCH's goal: the PATCH's own transaction, run by the sections service in the server
// process on the server's database handle, as the endpoint runs it (`db.transaction()`, the section's UPDATE
// and its `section.updated` event), as many at a time as the load has connections, over the same 1,000
// sections (on PostgreSQL concurrent transactions share the pipelined round trips; one at a time each would wait
// idle for its own, which costs more CPU than the HTTP PATCH does). Nothing else: no HTTP,
// no JSON, no tenancy, authentication, validation or serialisation. A PATCH over HTTP costs at least a bare
// PATCH plus this, so this divided by `bare-patch` is the part of the PATCH's budget the database takes by itself.
import type { Services } from '../src/services.ts';
import type { Db } from '../src/db/database.ts';
import type { Fixture } from './seed.ts';

export interface InProcessPatches {
  writes: number;
  /** This process's CPU time (user + system) over all of them, µs. */
  cpuMicros: number;
  seconds: number;
  p50Ms: number;
  p99Ms: number;
}

const percentile = (sorted: number[], p: number) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]);

let written = 0;

/**
 * PATCHes the spread sections' titles for `seconds` from `concurrency` loops, each write in its own transaction;
 * every title is new, so each really writes.
 */
export async function patchInProcess(services: Services, db: Db, fixture: Fixture, seconds: number, concurrency: number): Promise<InProcessPatches> {
  const latencies: number[] = [];
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const until = started + seconds * 1000;
  async function loop(): Promise<void> {
    while (performance.now() < until) {
      written += 1;
      const id = fixture.spreadSectionIds[written % fixture.spreadSectionIds.length];
      const title = `In process #${process.pid}-${written}`;
      const t0 = performance.now();
      await db.transaction().execute((tx) => services.sections.update(tx, fixture.organisationId, id, { title }));
      latencies.push(performance.now() - t0);
    }
  }
  await Promise.all(Array.from({ length: concurrency }, loop));
  const cpu = process.cpuUsage(cpuBefore);
  latencies.sort((a, b) => a - b);
  return { writes: latencies.length, cpuMicros: cpu.user + cpu.system, seconds: (performance.now() - started) / 1000, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99) };
}
