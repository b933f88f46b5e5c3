// Stopping a process cleanly on SIGTERM/SIGINT (docs/operating.md#starting-losing-the-database-stopping), in this order:
//   1. the listener closes: a new connection is refused, never answered 503; requests in flight finish (at
//      most 10 s) with `Connection: close`, and idle keep-alive connections are closed once idle for the
//      keep-alive timeout (http/listener.ts says why not sooner);
//   2. the worker stops and hands back the webhook deliveries it claimed but did not finish;
//   3. the app, the mail transport and the database close, then the metrics listener (it answered meanwhile,
//      so a scrape sees the drain); the process exits 0.
// A process still waiting for its database at start stops waiting. close-with-grace exits 1 if all this takes
// longer than it may, or on a second signal.
import closeWithGrace from 'close-with-grace';
import type { FastifyInstance } from 'fastify';
import type { Database } from './db/database.ts';
import type { Listener } from './http/listener.ts';
import type { MetricsListener } from './metrics/metrics-listener.ts';
import type { Worker } from './jobs/worker.ts';
import type { Services } from './services.ts';

export const DRAIN_TIMEOUT_MS = 10_000;
/** Beyond the drain: the worker abandons its attempts at once, so stopping it and the database takes little. */
const SHUTDOWN_LIMIT_MS = DRAIN_TIMEOUT_MS + 5_000;

interface ShutdownLog {
  info(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** What a process has started so far; filled in as start-up goes on. */
export interface Running {
  /** Aborted when shutdown begins: start-up stops where it is. */
  readonly stopping: AbortController;
  listener?: Listener;
  database?: Database;
  services?: Services;
  app?: FastifyInstance;
  worker?: Worker;
  metrics?: MetricsListener;
}

export async function shutDown(running: Running, log: ShutdownLog): Promise<void> {
  running.stopping.abort();
  await running.listener?.drain(DRAIN_TIMEOUT_MS);
  await running.worker?.stop();
  await running.app?.close();
  running.services?.mail.close();
  await running.database?.close();
  await running.metrics?.close();
  log.info({}, 'stopped');
}

export function shutDownOnSignals(running: Running, log: ShutdownLog): void {
  closeWithGrace(
    { delay: SHUTDOWN_LIMIT_MS, logger: { error: (message: unknown) => log.error({}, String(message)) } },
    async ({ signal, err }: { signal?: string; err?: unknown }) => {
      if (err) log.error({ err }, 'shutting down after an error');
      else log.info({ signal }, 'shutting down');
      await shutDown(running, log);
    },
  );
}
