// The PostgreSQL half of database.ts, in a file of its own so that the driver (`pg`) is loaded only by a
// process whose DATABASE_URL names PostgreSQL: a SQLite deployment never pays its memory.
import type { KyselyConfig } from 'kysely';
import pg from 'pg';
import type { Database, DatabaseOptions } from './database-types.ts';
import { createGuardedPool } from './pg-pool.ts';
import { PipelinedPostgresDialect } from './postgres-driver.ts';
import { timestamptzToIso } from './pg-timestamps.ts';
import { PostgresKysely } from './pg-transactions.ts';
import { directStatements } from './direct-statements.ts';

const TIMESTAMPTZ_OID = 1184;
const INT8_OID = 20;

// Timestamps leave the database as RFC 3339 UTC strings on both engines, so no layer above converts them
// (pg-timestamps.ts).
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === TIMESTAMPTZ_OID) return timestamptzToIso;
    if (oid === INT8_OID) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

export function openPostgresDatabase(databaseUrl: string, options: DatabaseOptions, log: Pick<KyselyConfig, 'log'>): Database {
  const pool = createGuardedPool({
    connectionString: databaseUrl,
    max: options.poolSize ?? 10,
    types: pgTypes,
    // Lets a transaction send several statements in one write (postgres-driver.ts).
    pipeline: true,
    ...(options.pgSchema ? { options: `-c search_path=${options.pgSchema}` } : {}),
    timeouts: options.timeouts ?? false,
    onConnectionError: options.onConnectionError,
  });
  const dialect = new PipelinedPostgresDialect(pool, { onConnectionError: options.onConnectionError, onRoundTrip: options.onRoundTrip });
  const db = new PostgresKysely({ dialect, ...log }, options.onQuery);
  // A prepared plain read goes to the driver without Kysely's executor (PipelinedPostgresDriver.readDirect).
  const driver = dialect.driver!;
  directStatements.set(db, {
    rows(query, reads) {
      const rows = reads ? driver.readDirect(query) : undefined;
      if (rows !== undefined) options.onQuery?.(query);
      return rows;
    },
  });
  return { db, dialect: 'postgres', close: () => db.destroy(), poolStats: pool.stats };
}
