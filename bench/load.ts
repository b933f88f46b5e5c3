// Runs autocannon against the server process: a warm-up, then the measured window, with the CPU time both
// processes spent during the measured window so the report can say which side was the bottleneck.
import autocannon, { type Request, type Result } from 'autocannon';
import type { Sample } from './measurement.ts';
import type { BenchSettings } from './settings.ts';
import type { ServerHandle } from './server-process.ts';

function fire(url: string, requests: Request[], connections: number, seconds: number): Promise<Result> {
  // autocannon mutates request objects (it caches the built buffer on them): each run gets its own copies.
  return Promise.resolve(autocannon({ url, connections, duration: seconds, requests: requests.map((r) => ({ ...r })) }));
}

export async function measure(server: ServerHandle, requests: Request[], settings: BenchSettings): Promise<Sample> {
  const warmup = await fire(server.url, requests, settings.connections, settings.warmupSeconds);
  const serverBefore = await server.cpu();
  const loadBefore = process.cpuUsage();
  const measured = await fire(server.url, requests, settings.connections, settings.seconds);
  const loadUsed = process.cpuUsage(loadBefore);
  const serverAfter = await server.cpu();
  const seconds = measured.duration;

  // Failures of the warm-up count too: a warm-up full of errors is as telling as a measurement.
  const statusCounts: Record<string, number> = {};
  for (const r of [warmup, measured]) {
    for (const [status, { count }] of Object.entries(r.statusCodeStats ?? {})) statusCounts[status] = (statusCounts[status] ?? 0) + count;
  }
  return {
    requestsPerSecond: measured.requests.total / seconds,
    p50Ms: measured.latency.p50,
    p99Ms: measured.latency.p99,
    non2xx: warmup.non2xx + measured.non2xx,
    // autocannon counts timeouts among errors already.
    errors: warmup.errors + measured.errors,
    statusCounts,
    serverCpu: (serverAfter.micros - serverBefore.micros) / 1e6 / seconds,
    loadCpu: (loadUsed.user + loadUsed.system) / 1e6 / seconds,
  };
}
