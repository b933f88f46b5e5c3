// Opens the database the configuration names: embedded SQLite under DATA_DIR by default, PostgreSQL when
// DATABASE_URL is set. Everything above src/db sees one Kysely<Tables> and never asks which one it is,
// except in the few places where the two engines differ: column-types.ts (migrations), locks.ts and claims.ts.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Kysely, type CompiledQuery, type KyselyConfig } from 'kysely';
import type { PoolStats } from './pg-pool.ts';
import { NodeSqliteDatabase } from './sqlite-adapter.ts';
import { directStatements } from './direct-statements.ts';
import { GroupCommitKysely, type CommitStats } from './sqlite-group-commit.ts';
import type { RoundTripObserver } from './postgres-driver.ts';
import type { Tables } from './tables.ts';

// PostgreSQL's half, driver and all, is loaded only when DATABASE_URL asks for it (postgres-database.ts).
// `require`, not `import()`: opening a database stays synchronous for its many callers, and Node 24 requires
// an ES module that has no top-level await.
const require = createRequire(import.meta.url);
const postgres = (): typeof import('./postgres-database.ts') => require('./postgres-database.ts');

export type DialectName = 'sqlite' | 'postgres';
export type Db = Kysely<Tables>;

export interface Database {
  db: Db;
  dialect: DialectName;
  close(): Promise<void>;
  /** PostgreSQL: the connection pool's state now (SQLite has one connection and no pool). */
  poolStats?: () => PoolStats;
  /** SQLite: the commits so far and the transactions they carried (sqlite-group-commit.ts). */
  commitStats?: () => Readonly<CommitStats>;
}

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  /** SQLite file, or ':memory:'. */
  sqliteFile?: string;
  poolSize?: number;
  /** PostgreSQL schema to work in (tests give each app its own). */
  pgSchema?: string;
  /** PostgreSQL: bound connecting and each query in time (pg-pool.ts), so a lost database answers 502 quickly. */
  timeouts?: boolean;
  /** PostgreSQL: told about each connection that failed. */
  onConnectionError?: (err: Error) => void;
  /** Sees every statement run (the query-plan test explains them); unset in production, where it would cost. */
  onQuery?: (query: CompiledQuery) => void;
  /** PostgreSQL: sees every round trip to the server (postgres-driver.ts); unset in production. */
  onRoundTrip?: RoundTripObserver;
}

export function openDatabase(options: DatabaseOptions): Database {
  const { onQuery } = options;
  const log: Pick<KyselyConfig, 'log'> = onQuery ? { log: (event) => onQuery(event.query) } : {};
  if (options.databaseUrl) return postgres().openPostgresDatabase(options.databaseUrl, options, log);
  const file = options.sqliteFile ?? ':memory:';
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new NodeSqliteDatabase(file);
  // Transactions on SQLite share commits (sqlite-group-commit.ts); everything else is Kysely's own.
  const db = new GroupCommitKysely(sqlite, log, onQuery);
  directStatements.set(db, (query, reads) => {
    if (!reads || sqlite.raw.isTransaction) return undefined;
    onQuery?.(query);
    return sqlite.prepare(query.sql).all(query.parameters);
  });
  return { db, dialect: 'sqlite', close: () => db.destroy(), commitStats: () => ({ ...db.commitStats }) };
}
