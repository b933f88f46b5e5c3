// Applies the timestamped migrations in src/db/migrations, in name order, once each. Run at start-up,
// by `atrium migrate`, and by the test harness on every fresh database.
import fs from 'node:fs/promises';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import { isPostgres } from './column-types.ts';
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';

const migrationsDir = path.join(import.meta.dirname, 'migrations');

const provider: MigrationProvider = {
  async getMigrations() {
    const files = (await fs.readdir(migrationsDir)).filter((f) => /^\d{14}-.*\.ts$/.test(f)).sort();
    const migrations: Record<string, Migration> = {};
    // A migration's file is imported only when it runs: a process starting on a migrated database (every start
    // but the first) needs the names alone, and keeps none of the migrations' code in memory.
    for (const file of files) {
      const load = async () => (await import(path.join(migrationsDir, file))) as Migration;
      // No migration has a `down` (the service only migrates forward).
      migrations[file.replace(/\.ts$/, '')] = { up: async (db) => (await load()).up(db) };
    }
    return migrations;
  },
};

export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  // On PostgreSQL, Kysely looks for its bookkeeping tables in every schema unless told which one; name the
  // current schema so that databases holding several atrium schemas (tests, benchmarks) migrate each on its own.
  const schema = isPostgres(db) ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0].schema : undefined;
  const migrate = async (on: Kysely<any>) => {
    const migrator = new Migrator({
      db: on,
      provider,
      migrationTableName: 'atrium_migrations',
      migrationLockTableName: 'atrium_migrations_lock',
      ...(schema ? { migrationTableSchema: schema } : {}),
    });
    const { error, results } = await migrator.migrateToLatest();
    if (error) throw error instanceof Error ? error : new Error(String(error));
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  };
  // On PostgreSQL everything runs in one transaction: every statement on its connection, and the migrations
  // commit all together or not at all. The migrator's lock is held by that transaction (postgres-driver.ts,
  // TransactionLockedAdapter), so that it ends with it, however it ends: Kysely's own session lock, unlocked by a
  // statement of its own, stayed held on a pooled connection when a migration failed, and that statement's refusal
  // in the aborted transaction hid the migration's error.
  return schema !== undefined ? db.transaction().execute(migrate) : migrate(db);
}
