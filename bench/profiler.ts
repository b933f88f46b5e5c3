// In the server process: a CPU profile of exactly one measured window (BENCH_CPU_PROF), started and stopped
// by the load side around the window, so that start-up, seeding and warm-up stay out of it. Sampling every
// 250 µs: finer sampling costs so much that it distorts what it measures (at 100 µs a read took twice its time).
import fs from 'node:fs';
import path from 'node:path';
import { Session } from 'node:inspector/promises';

const SAMPLING_INTERVAL_US = 250;

export function createWindowProfiler() {
  let session: Session | undefined;
  return {
    async start(): Promise<void> {
      session = new Session();
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: SAMPLING_INTERVAL_US });
      await session.post('Profiler.start');
    },
    /** Writes the window's profile to `file` (a .cpuprofile, which Chrome DevTools and VS Code open). */
    async stop(file: string): Promise<void> {
      if (!session) throw new Error('profile-stop without profile-start');
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      session = undefined;
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, JSON.stringify(profile));
    },
  };
}
