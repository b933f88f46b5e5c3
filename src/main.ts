// Process entry: configuration → listener → database (waiting for it) → migrations → app and/or worker
// (ATRIUM_ROLES); clean shutdown on signals (shutdown.ts). `atrium worker` runs the worker alone through the
// same function. The listener opens first, so that an orchestrator sees /healthz 200 and /readyz 503 while
// the process waits for its database (docs/operating.md#starting-losing-the-database-stopping).
import pino from 'pino';
import { buildApp } from './app.ts';
import { bootstrapIfEmpty, describeBootstrap, type BootstrapResult } from './bootstrap.ts';
import { systemClock } from './clock.ts';
import { ConfigError, loadConfig, type Config, type Role } from './config.ts';
import { describeDatabaseError, isDatabaseUnavailable } from './db/availability.ts';
import { waitForDatabase } from './db/wait-for-database.ts';
import { openListener } from './http/listener.ts';
import { publicOrigin } from './public-origin.ts';
import { backgroundJobs } from './jobs/jobs.ts';
import { startWorker } from './jobs/worker.ts';
import { migrateDatabase, openServingDatabase, servicesFor } from './runtime.ts';
import type { Services } from './services.ts';
import { shutDownOnSignals, type Running } from './shutdown.ts';

export async function serve(config: Config, roles: ReadonlySet<Role> = config.roles): Promise<void> {
  const log = pino({ level: config.logLevel });
  const running: Running = { stopping: new AbortController() };
  shutDownOnSignals(running, log);
  const { signal } = running.stopping;
  const api = roles.has('api');
  if (api) {
    running.listener = await openListener({ host: config.host, port: config.port, errorsUrl: config.errorsUrl, log });
    log.info({ address: running.listener.url, roles: [...roles] }, 'atrium listening');
  }
  const database = openServingDatabase(
    config,
    (err) => log.warn({ error: describeDatabaseError(err) }, 'database connection failed'),
    {
      running: (running) => log.info(running ? 'SQLite checkpoints in a thread while writes are sustained' : 'SQLite checkpoints by itself again'),
      failed: (err) => log.warn({ error: describeDatabaseError(err) }, 'the SQLite checkpoint thread failed: SQLite checkpoints by itself, and no thread starts for a minute'),
    },
  );
  running.database = database;
  if (config.metricsPort !== undefined) {
    // prom-client and the metrics modules are loaded only by a process that serves metrics.
    const [{ collectMetrics }, { registerDatabaseGauges }, { openMetricsListener }] = await Promise.all([
      import('./metrics/prometheus.ts'),
      import('./metrics/database-gauges.ts'),
      import('./metrics/metrics-listener.ts'),
    ]);
    collectMetrics();
    registerDatabaseGauges(database, systemClock);
    running.metrics = await openMetricsListener({ host: config.metricsHost, port: config.metricsPort });
    log.info({ address: running.metrics.url }, 'metrics listening');
  }
  try {
    const clock = systemClock;
    let services: Services;
    let created: BootstrapResult | undefined;
    // Each step is safe to run again, so if the database goes away again meanwhile, wait for it once more.
    for (;;) {
      await waitForDatabase(database.db, { log, signal });
      try {
        await migrateDatabase(config);
        services = await servicesFor(config, database, clock);
        created = api && config.devBootstrap ? await bootstrapIfEmpty(services) : undefined;
        if (api) running.app ??= await buildApp({ config, database, clock });
        break;
      } catch (err) {
        if (!isDatabaseUnavailable(err) || signal.aborted) throw err;
        log.warn({ error: describeDatabaseError(err) }, 'database lost while starting; waiting for it');
      }
    }
    running.services = services;
    if (running.app) running.listener!.attach(running.app);
    if (created) process.stdout.write(describeBootstrap(created, publicOrigin(config, created.organisation.address)) + '\n');
    // The worker uses the runtime's services, not the app's: the same code over the same database, and a
    // worker-only process has no app at all.
    if (roles.has('worker') && !signal.aborted) running.worker = startWorker(backgroundJobs(services, config), log);
    log.info({ database: database.dialect, roles: [...roles] }, api ? 'atrium ready' : 'atrium worker running');
  } catch (err) {
    // Shutdown began while starting: what was started is being stopped, and the process exits 0.
    if (signal.aborted) return;
    throw err;
  }
}

if (import.meta.main) {
  try {
    await serve(loadConfig());
  } catch (err) {
    process.stderr.write((err instanceof ConfigError ? err.message : `atrium could not start: ${(err as Error).stack ?? String(err)}`) + '\n');
    // The listener may be open already: exit rather than answer 502 for ever.
    process.exit(1);
  }
}
