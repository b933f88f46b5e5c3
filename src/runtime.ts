// Opens what a process needs from configuration: the database (migrated) and the services over it.
// Shared by the server (main.ts), the CLI and the benchmarks.
import fs from 'node:fs';
import path from 'node:path';
import tls from 'node:tls';
import type { Config } from './config.ts';
import { systemClock, type Clock } from './clock.ts';
import { openDatabase, type Database } from './db/database.ts';
import type { CheckpointReports } from './db/sqlite-checkpoints.ts';
import { migrateToLatest } from './db/migrate.ts';
import { createServices, type Services } from './services.ts';
import { createCursorCodec } from './operations/pagination.ts';
import { readDeploymentSecret } from './db/deployment-secrets.ts';
import { apiChanges, createRevisions, type Revisions } from './operations/revisions.ts';

export function sqliteFileFor(config: Config): string {
  return path.join(config.dataDir, 'atrium.sqlite');
}

/** The services over a migrated database, with the deployment's secrets and the configuration they need. */
export async function servicesFor(
  config: Config,
  database: Database,
  clock: Clock,
  options: { revisions?: Revisions; onBackgroundError?: (err: unknown) => void } = {},
): Promise<Services> {
  const [cursorKey, webhookKey] = await Promise.all([readDeploymentSecret(database.db, 'cursor_signing_key'), readDeploymentSecret(database.db, 'webhook_secret_key')]);
  return createServices({
    db: database.db,
    clock,
    cursors: createCursorCodec(cursorKey),
    storage: { dir: config.storageDir, targetsRoot: config.storageTargetsRoot },
    mail: { smtpUrl: config.smtpUrl, from: config.mailFrom },
    webhooks: {
      allowHosts: config.webhookAllowHosts,
      // Node's `ca` replaces the default roots, so the operator's CA is added to them, not swapped in.
      ca: config.webhookCaFile ? [...tls.rootCertificates, fs.readFileSync(config.webhookCaFile, 'utf8')] : undefined,
      secretKey: webhookKey,
      leaseMs: config.webhookLeaseMs,
    },
    revisions: options.revisions ?? createRevisions(apiChanges),
    publicOrigin: config,
    auditRetentionDays: config.auditRetentionDays,
    onBackgroundError: options.onBackgroundError,
  });
}

/**
 * The database of a serving process: PostgreSQL connecting and queries bounded in time (db/pg-pool.ts), so a
 * database that goes away turns into 502s within 5 s, and each failed connection reported; SQLite checkpointing
 * in a thread while writes are sustained (db/sqlite-checkpoints.ts).
 */
export function openServingDatabase(config: Config, onConnectionError?: (err: Error) => void, onCheckpointThread?: CheckpointReports): Database {
  return openDatabase({ databaseUrl: config.databaseUrl, sqliteFile: sqliteFileFor(config), timeouts: true, onConnectionError, checkpointThread: true, onCheckpointThread });
}

/** Applies pending migrations over connections of their own, without that time bound: a migration may rightly take longer. */
export async function migrateDatabase(config: Config): Promise<void> {
  const database = openDatabase({ databaseUrl: config.databaseUrl, sqliteFile: sqliteFileFor(config) });
  try {
    await migrateToLatest(database.db);
  } finally {
    await database.close();
  }
}

export async function openRuntime(config: Config, clock: Clock = systemClock): Promise<{ database: Database; services: Services; clock: Clock }> {
  const database = openDatabase({ databaseUrl: config.databaseUrl, sqliteFile: sqliteFileFor(config) });
  try {
    await migrateToLatest(database.db);
    return { database, services: await servicesFor(config, database, clock), clock };
  } catch (err) {
    // An open PostgreSQL pool would keep a failed process alive.
    await database.close();
    throw err;
  }
}
