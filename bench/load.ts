// Runs autocannon against the server process: a warm-up, then the measured window, with the CPU time both
// processes spent during the measured window so the report can say which side was the bottleneck.
// Latency percentiles come from every response's own time (autocannon's summary rounds to whole ms).
import path from 'node:path';
import fs from 'node:fs';
import autocannon, { type Request, type Result } from 'autocannon';
import type { Sample } from './measurement.ts';
import type { BenchSettings } from './settings.ts';
import type { ServerHandle } from './server-process.ts';
import { summariseProfile, type CpuProfile } from './profile-summary.ts';

async function fire(url: string, requests: Request[], connections: number, seconds: number, rate: number | undefined, latencies?: number[]): Promise<Result> {
  // autocannon mutates request objects (it caches the built buffer on them): each run gets its own copies.
  const instance = autocannon({ url, connections, duration: seconds, requests: requests.map((r) => ({ ...r })), ...(rate !== undefined ? { overallRate: rate } : {}) });
  if (latencies) instance.on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => void latencies.push(ms));
  return instance;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export interface MeasureOptions {
  /** With BENCH_CPU_PROF: the file name (without directory) for this window's profile. */
  profileName?: string;
  /** Requests a second from all the connections together (autocannon's overallRate); as many as they can, when absent. */
  rate?: number;
}

export async function measure(server: ServerHandle, requests: Request[], settings: BenchSettings, options: MeasureOptions = {}): Promise<Sample> {
  const warmup = await fire(server.url, requests, settings.connections, settings.warmupSeconds, options.rate);
  const profileFile = settings.cpuProfileDir && options.profileName ? path.resolve(settings.cpuProfileDir, `${options.profileName}.cpuprofile`) : undefined;
  if (profileFile) await server.profileStart();
  const latencies: number[] = [];
  const serverBefore = await server.cpu();
  const loadBefore = process.cpuUsage();
  const measured = await fire(server.url, requests, settings.connections, settings.seconds, options.rate, latencies);
  const loadUsed = process.cpuUsage(loadBefore);
  const serverAfter = await server.cpu();
  if (profileFile) {
    await server.profileStop(profileFile);
    const summary = summariseProfile(JSON.parse(fs.readFileSync(profileFile, 'utf8')) as CpuProfile, measured.requests.total);
    fs.writeFileSync(profileFile.replace(/\.cpuprofile$/, '.txt'), summary + '\n');
  }
  const seconds = measured.duration;

  // Failures of the warm-up count too: a warm-up full of errors is as telling as a measurement.
  const statusCounts: Record<string, number> = {};
  for (const r of [warmup, measured]) {
    for (const [status, { count }] of Object.entries(r.statusCodeStats ?? {})) statusCounts[status] = (statusCounts[status] ?? 0) + count;
  }
  latencies.sort((a, b) => a - b);
  const serverMicros = serverAfter.micros - serverBefore.micros;
  const responses = Math.max(1, measured.requests.total);
  return {
    requestsPerSecond: measured.requests.total / seconds,
    requests: measured.requests.total,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    non2xx: warmup.non2xx + measured.non2xx,
    // autocannon counts timeouts among errors already.
    errors: warmup.errors + measured.errors,
    statusCounts,
    serverCpu: serverMicros / 1e6 / seconds,
    serverMicrosPerRequest: serverMicros / responses,
    serverUserMicrosPerRequest: (serverAfter.userMicros - serverBefore.userMicros) / responses,
    loadCpu: (loadUsed.user + loadUsed.system) / 1e6 / seconds,
    sleepsPerRequest: (serverAfter.sleeps - serverBefore.sleeps) / responses,
  };
}
