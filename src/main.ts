// Process entry: configuration → database → app and/or worker (ATRIUM_ROLES) → listen; graceful shutdown on
// signals. `atrium worker` runs the worker alone through the same function.
import closeWithGrace from 'close-with-grace';
import pino from 'pino';
import { buildApp } from './app.ts';
import { bootstrapIfEmpty, describeBootstrap } from './bootstrap.ts';
import { ConfigError, loadConfig, type Config, type Role } from './config.ts';
import { backgroundJobs } from './jobs/jobs.ts';
import { startWorker } from './jobs/worker.ts';
import { openRuntime } from './runtime.ts';
import { publicOrigin } from './public-origin.ts';

export async function serve(config: Config, roles: ReadonlySet<Role> = config.roles): Promise<void> {
  const { database, services, clock } = await openRuntime(config);
  const api = roles.has('api');
  const created = api && config.devBootstrap ? await bootstrapIfEmpty(services) : undefined;
  const app = api ? await buildApp({ config, database, clock }) : undefined;
  const log = app?.log ?? pino({ level: config.logLevel });
  // The worker uses the runtime's services, not the app's: the same code over the same database, and a
  // worker-only process has no app at all.
  const worker = roles.has('worker') ? startWorker(backgroundJobs(services, config), log) : undefined;
  closeWithGrace({ delay: 10_000 }, async ({ err }) => {
    if (err) log.error({ err }, 'shutting down after an error');
    await worker?.stop();
    await app?.close();
    services.mail.close();
    await database.close();
  });
  if (!app) {
    log.info({ database: database.dialect, roles: [...roles] }, 'atrium worker running');
    return;
  }
  const address = await app.listen({ host: config.host, port: config.port });
  if (created) process.stdout.write(describeBootstrap(created, publicOrigin(config, created.organisation.address)) + '\n');
  app.log.info({ address, database: database.dialect, roles: [...roles] }, 'atrium listening');
}

if (import.meta.main) {
  try {
    await serve(loadConfig());
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(err.message + '\n');
      process.exit(1);
    }
    throw err;
  }
}
