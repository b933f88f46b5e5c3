// A SQLite file opened as the service opens it (openDatabase: WAL, the group commit, direct reads), with a
// `notes` table, and a second connection to the same file, as another process (the CLI, a worker) would hold:
// for the tests of the SQLite layer (src/db/sqlite-*.test.ts), which check from outside what the service's
// connection committed or holds.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { sql } from 'kysely';
import { openDatabase, type Database, type DatabaseOptions } from '../../src/db/database.ts';

export interface NotesFile {
  database: Database;
  /** Another connection to the file. */
  other: DatabaseSync;
  /** The file's path. */
  file: string;
  dispose(): Promise<void>;
}

export async function openNotesFile(name: string, options: Omit<DatabaseOptions, 'sqliteFile'> = {}): Promise<NotesFile> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `atrium-${name}-`));
  const file = path.join(dir, `${name}.sqlite`);
  const database = openDatabase({ ...options, sqliteFile: file });
  await sql`create table notes (text text primary key)`.execute(database.db);
  const other = new DatabaseSync(file);
  other.exec('PRAGMA busy_timeout = 5000');
  return {
    database,
    other,
    file,
    async dispose() {
      other.close();
      await database.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
