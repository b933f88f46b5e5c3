// In the server process: the plans of the statements a scale request runs, as the engine chooses them at the
// current size. The request is replayed (app.inject) on a second app over a second handle of the same
// database that records its statements (DatabaseOptions.onQuery), so that the measured app pays nothing for
// the recording. The organisation and key lookups every request makes are left out (test/query-plans.test.ts
// keeps them on their indexes too): what is shown is what depends on the size.
import type { FastifyInstance } from 'fastify';
import type { CompiledQuery } from 'kysely';
import { buildApp } from '../src/app.ts';
import type { Clock } from '../src/clock.ts';
import type { Config } from '../src/config.ts';
import { openDatabase, type Database, type DatabaseOptions } from '../src/db/database.ts';
import { explain } from '../src/db/query-plans.ts';

const PER_REQUEST_LOOKUPS = /^\s*select\b[\s\S]*\bfrom "(organisations|api_keys)"/i;

export function createPlanReader(config: Config, databaseOptions: DatabaseOptions, clock: Clock) {
  let recorded: CompiledQuery[] = [];
  let opened: Promise<{ app: FastifyInstance; database: Database }> | undefined;
  const open = async () => {
    const database = openDatabase({ ...databaseOptions, onQuery: (query) => void recorded.push(query) });
    return { app: await buildApp({ config, database, clock, logger: false }), database };
  };
  return {
    /** For each path: each statement it ran, then that statement's plan, indented. */
    async plans(paths: string[], headers: Record<string, string>): Promise<Record<string, string[]>> {
      const { app, database } = await (opened ??= open());
      const result: Record<string, string[]> = {};
      for (const path of paths) {
        recorded = [];
        const res = await app.inject({ url: path, headers });
        if (res.statusCode !== 200) throw new Error(`${path} answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
        const statements = recorded.filter((q) => /^\s*select\b/i.test(q.sql) && !PER_REQUEST_LOOKUPS.test(q.sql));
        result[path] = [];
        for (const query of statements) {
          result[path].push(query.sql, ...(await explain(database.db, database.dialect, query)).map((line) => `  ${line}`));
        }
      }
      return result;
    },
    async close(): Promise<void> {
      if (!opened) return;
      const { app, database } = await opened;
      await app.close();
      await database.close();
    },
  };
}
