// Boots the real app on a real, freshly migrated database: a temporary SQLite file, or — when
// TEST_DATABASE_URL is set — a schema of its own in that PostgreSQL database, dropped at the end.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { manualClock, systemClock, type Clock } from '../../src/clock.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { openDatabase, type Database, type DatabaseOptions } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import type { Operation } from '../../src/operations/operation.ts';
import type { Revisions } from '../../src/operations/revisions.ts';
import { createFactories, type Caller, type Factories } from './factories.ts';
import { createApiClient, type ApiClient } from './api-client.ts';
import { startReceiver, testCertificate, type Receiver } from '../../testkit/webhook-receiver.ts';

export const testDatabaseUrl = process.env.TEST_DATABASE_URL || undefined;
export const dialectUnderTest = testDatabaseUrl ? 'postgres' : 'sqlite';

export interface TestDatabase {
  database: Database;
  /** The same database again, as a second process would open it. */
  reopen(): Database;
  /** Environment that points another process (`atrium worker`) at this same database. */
  env: Record<string, string>;
  drop(): Promise<void>;
}

export async function createTestDatabase(dialect: 'sqlite' | 'postgres' = dialectUnderTest, options: Pick<DatabaseOptions, 'onQuery' | 'onRoundTrip'> = {}): Promise<TestDatabase> {
  if (dialect === 'postgres' && testDatabaseUrl) {
    const schema = `t_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: testDatabaseUrl });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    await admin.end();
    const open = () => openDatabase({ databaseUrl: testDatabaseUrl, pgSchema: schema, poolSize: 5, ...options });
    const database = open();
    await migrateToLatest(database.db);
    return {
      database,
      reopen: open,
      env: { DATABASE_URL: `${testDatabaseUrl}${testDatabaseUrl.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}` },
      async drop() {
        await database.close();
        const c = new pg.Client({ connectionString: testDatabaseUrl });
        await c.connect();
        await c.query(`drop schema ${schema} cascade`);
        await c.end();
      },
    };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'atrium-test-'));
  const file = path.join(dir, 'atrium.sqlite');
  const open = () => openDatabase({ sqliteFile: file, ...options });
  const database = open();
  await migrateToLatest(database.db);
  return {
    database,
    reopen: open,
    env: { DATA_DIR: dir },
    async drop() {
      await database.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface TestContext {
  app: FastifyInstance;
  config: Config;
  clock: Clock;
  database: Database;
  make: Factories;
  /** Requests against the real app, each response checked against the OpenAPI document. */
  api: ApiClient;
  /** A real HTTPS endpoint for webhooks (the app trusts its certificate). */
  receiver: Receiver;
  /** Environment for another process (`atrium worker`) on this app's database and webhook settings. */
  processEnv: Record<string, string>;
  /** Listens on an ephemeral loopback port (for browsers and protocol clients); the port. */
  listen(): Promise<number>;
  /** `http://{address}:{port}` of a listening app: organisations at `*.localhost` reach it from Chromium. */
  originOf(address: string): string;
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  clock?: Clock;
  operations?: Operation[];
  revisions?: Revisions;
  /** SQLite even when TEST_DATABASE_URL is set (a test of SQLite's own failures). */
  dialect?: 'sqlite' | 'postgres';
  /** The database the app itself uses, if not the test's (the same one through a proxy, say); factories use the test's. */
  appDatabase?: (test: TestDatabase) => Database;
  /** Sees every statement the test's database runs (DatabaseOptions.onQuery). */
  onQuery?: DatabaseOptions['onQuery'];
  /** Sees every round trip to PostgreSQL (DatabaseOptions.onRoundTrip). */
  onRoundTrip?: DatabaseOptions['onRoundTrip'];
  /** Routes beside the service's (a baseline to compare it with). */
  extraRoutes?: (app: FastifyInstance) => void;
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestContext> {
  const files = fs.mkdtempSync(path.join(os.tmpdir(), 'atrium-files-'));
  // Webhooks go to a real HTTPS receiver on loopback, which the SSRF guard lets through only by configuration.
  const receiver = await startReceiver();
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    DEV_BOOTSTRAP: 'false',
    // A host of its own, with the service's own path: docs_url must reach the service's error pages.
    ERRORS_URL: 'https://errors.atrium.test/docs/errors',
    STORAGE_DIR: path.join(files, 'deployment'),
    STORAGE_TARGETS_ROOT: path.join(files, 'targets'),
    WEBHOOK_ALLOW_HOSTS: '127.0.0.1/32',
    WEBHOOK_CA_FILE: testCertificate().certFile,
    ...options.env,
  });
  const clock = options.clock ?? systemClock;
  const testDb = await createTestDatabase(options.dialect, { onQuery: options.onQuery, onRoundTrip: options.onRoundTrip });
  const appDatabase = options.appDatabase?.(testDb) ?? testDb.database;
  const app = await buildApp({ config, database: appDatabase, clock, operations: options.operations, revisions: options.revisions, extraRoutes: options.extraRoutes });
  const make = createFactories(app.services, testDb.database, { webhookUrl: receiver.url }, app);
  let port: number | undefined;
  return {
    app,
    config,
    clock,
    database: testDb.database,
    make,
    api: createApiClient(app, options.operations),
    receiver,
    processEnv: {
      ...testDb.env,
      LOG_LEVEL: 'silent',
      DEV_BOOTSTRAP: 'false',
      STORAGE_DIR: config.storageDir,
      STORAGE_TARGETS_ROOT: config.storageTargetsRoot,
      WEBHOOK_ALLOW_HOSTS: config.webhookAllowHosts.join(','),
      WEBHOOK_CA_FILE: config.webhookCaFile ?? '',
    },
    async listen() {
      if (port === undefined) {
        await app.listen({ host: '127.0.0.1', port: 0 });
        port = (app.server.address() as { port: number }).port;
        // Absolute URLs the service prints (OAuth issuer, MCP resource) carry the port it really listens on.
        config.publicPort = port;
      }
      return port;
    },
    originOf(address: string) {
      if (port === undefined) throw new Error('call listen() first');
      return `http://${address}:${port}`;
    },
    async close() {
      await receiver.close();
      await app.close();
      if (appDatabase !== testDb.database) await appDatabase.close();
      await testDb.drop();
      fs.rmSync(files, { recursive: true, force: true });
    },
  };
}

export { manualClock };

/** A test app on the database under test and an administrator of a new organisation calling it. */
export async function startTestAppWithCaller(options: TestAppOptions = {}): Promise<{ t: TestContext; caller: Caller }> {
  const t = await startTestApp(options);
  try {
    return { t, caller: await t.make.caller() };
  } catch (err) {
    await t.close();
    throw err;
  }
}
