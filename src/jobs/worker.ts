// The worker loop: a small list of named jobs, each run again `intervalMs` after its previous pass ended (so a
// slow pass never overlaps the next). The same build runs it beside the API or alone (ATRIUM_ROLES, `atrium
// worker`). Jobs must be safe to run in several processes at once: they claim their work in the database.
import { setTimeout as sleep } from 'node:timers/promises';
import { describeDatabaseError, isDatabaseUnavailable } from '../db/availability.ts';

/**
 * After failed passes in a row (the database away, the SMTP server down) a job waits longer each time, from
 * 100 ms doubling up to 10 s: the log is not flooded, and the job is back within 10 s of the outage ending.
 */
const FIRST_BACKOFF_MS = 100;
const LONGEST_BACKOFF_MS = 10_000;

export interface Job {
  /** Shown in logs: `area.what`. */
  name: string;
  intervalMs: number;
  /** One pass over the work there is now. `signal` is aborted at shutdown: stop at the next safe point. */
  run(signal: AbortSignal): Promise<unknown>;
}

/** What the loop logs through; pino's (and so Fastify's) logger has this shape. */
export interface WorkerLog {
  info(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface Worker {
  /** Asks every job to stop, and resolves once each pass in progress has ended. */
  stop(): Promise<void>;
}

export function startWorker(jobs: readonly Job[], log: WorkerLog): Worker {
  const controller = new AbortController();
  const { signal } = controller;

  async function loop(job: Job): Promise<void> {
    let failures = 0;
    while (!signal.aborted) {
      let waitMs = job.intervalMs;
      try {
        await job.run(signal);
        failures = 0;
      } catch (err) {
        // A failed pass is logged and tried again later; it must not stop the other jobs, nor the process.
        failures++;
        waitMs = Math.max(job.intervalMs, Math.min(FIRST_BACKOFF_MS * 2 ** (failures - 1), LONGEST_BACKOFF_MS));
        const cause = isDatabaseUnavailable(err) ? { error: describeDatabaseError(err) } : { err };
        log.error({ ...cause, job: job.name, failures, retryInMs: waitMs }, 'background job failed');
      }
      await sleep(waitMs, undefined, { signal }).catch(() => undefined);
    }
  }

  log.info({ jobs: jobs.map((j) => j.name) }, 'worker started');
  const loops = jobs.map(loop);
  return {
    async stop() {
      controller.abort();
      await Promise.all(loops);
    },
  };
}
