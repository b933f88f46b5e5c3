// `atrium migrate`: applies pending migrations and names them. It opens the database itself rather than
// through the runtime, because opening the runtime migrates silently and there would be nothing left to report.
import { openDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { sqliteFileFor } from '../runtime.ts';
import type { Command } from './command.ts';

export const migrateCommand: Command = {
  words: ['migrate'],
  synopsis: '',
  options: {},
  async run(_args, ctx) {
    const database = openDatabase({ databaseUrl: ctx.config.databaseUrl, sqliteFile: sqliteFileFor(ctx.config) });
    try {
      const applied = await migrateToLatest(database.db);
      return { json: { applied }, text: applied.length === 0 ? 'The database is up to date.' : `Applied ${applied.length} migration(s): ${applied.join(', ')}.` };
    } finally {
      await database.close();
    }
  },
};
