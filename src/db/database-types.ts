// The types every layer sees of the database, apart from the code that opens it (database.ts), so that the
// engines' own halves (postgres-database.ts, the driver, riders.ts) can name them without importing the opener.
import type { CompiledQuery, Kysely } from 'kysely';
import type { PoolStats } from './pg-pool.ts';
import type { CommitStats } from './sqlite-group-commit.ts';
import type { CheckpointReports, CheckpointThread, CheckpointThreadOptions } from './sqlite-checkpoints.ts';
import type { Tables } from './tables.ts';

/** PostgreSQL: told the statements of each round trip, a socket write the caller then waits on (postgres-driver.ts). */
export type RoundTripObserver = (statements: string[]) => void;

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
  /** SQLite, with `checkpointThread`: the thread that checkpoints while writes are sustained (sqlite-checkpoints.ts). */
  checkpoints?: CheckpointThread;
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
  /** Told about each connection that failed (PostgreSQL). */
  onConnectionError?: (err: Error) => void;
  /**
   * SQLite: checkpoint in a thread of its own while writes are sustained (sqlite-checkpoints.ts). For the
   * serving process; a short-lived one (the CLI, a test) leaves checkpoints to SQLite.
   */
  checkpointThread?: boolean | CheckpointThreadOptions;
  /**
   * SQLite, with `checkpointThread`: told when the thread starts and ends, and when it failed (SQLite then
   * checkpoints by itself, and no thread starts for a minute).
   */
  onCheckpointThread?: CheckpointReports;
  /** Sees every statement run (the query-plan test explains them); unset in production, where it would cost. */
  onQuery?: (query: CompiledQuery) => void;
  /** PostgreSQL: sees every round trip to the server (postgres-driver.ts); unset in production. */
  onRoundTrip?: RoundTripObserver;
}
