// Opens the database the configuration names: embedded SQLite under DATA_DIR by default, PostgreSQL when
// DATABASE_URL is set. Everything above src/db sees one Kysely<Tables> and never asks which one it is,
// except in the few places where the two engines differ: column-types.ts (migrations), locks.ts and claims.ts.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { KyselyConfig } from 'kysely';
import { NodeSqliteDatabase } from './sqlite-adapter.ts';
import { directStatements } from './direct-statements.ts';
import { hintsOf } from './statement-hints.ts';
import { GroupCommitKysely } from './sqlite-group-commit.ts';
import { CHECKPOINT_THREAD, watchCheckpoints } from './sqlite-checkpoints.ts';
import type { Database, DatabaseOptions } from './database-types.ts';

// PostgreSQL's half, driver and all, is loaded only when DATABASE_URL asks for it (postgres-database.ts).
// `require`, not `import()`: opening a database stays synchronous for its many callers, and Node 24 requires
// an ES module that has no top-level await.
const require = createRequire(import.meta.url);
const postgres = (): typeof import('./postgres-database.ts') => require('./postgres-database.ts');

export type { Database, DatabaseOptions, Db, DialectName } from './database-types.ts';

export function openDatabase(options: DatabaseOptions): Database {
  const { onQuery } = options;
  const log: Pick<KyselyConfig, 'log'> = onQuery ? { log: (event) => onQuery(event.query) } : {};
  if (options.databaseUrl) return postgres().openPostgresDatabase(options.databaseUrl, options, log);
  const file = options.sqliteFile ?? ':memory:';
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new NodeSqliteDatabase(file);
  // Transactions on SQLite share commits (sqlite-group-commit.ts); everything else is Kysely's own.
  const db = new GroupCommitKysely(sqlite, log, onQuery);
  directStatements.set(db, {
    rows(query, reads) {
      if (!reads || sqlite.inOwnTransaction) return undefined;
      onQuery?.(query);
      return sqlite.readInTurn(query.sql, query.parameters, hintsOf(query)?.sharedInTurn === true);
    },
  });
  const thread = options.checkpointThread === true ? CHECKPOINT_THREAD : options.checkpointThread || undefined;
  const checkpoints =
    thread && file !== ':memory:'
      ? watchCheckpoints(
          { connection: sqlite.raw, file, commits: () => db.commitStats.commits, holdWrites: () => db.holdConnection() },
          options.onCheckpointThread ?? {},
          thread,
        )
      : undefined;
  return {
    db,
    dialect: 'sqlite',
    async close() {
      // The thread's connection goes first: the service's, closed last, checkpoints what is left.
      await checkpoints?.close();
      await db.destroy();
    },
    commitStats: () => ({ ...db.commitStats }),
    ...(checkpoints ? { checkpoints } : {}),
  };
}
