// The databases a run is measured on. Each target is created fresh for the run and removed after it, by
// this (parent) process, so a crashed server process still leaves nothing behind.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { DialectName } from '../src/db/database.ts';

export interface DatabaseTarget {
  dialect: DialectName;
  /** Environment for the server process (bench/server.ts reads these). */
  env: Record<string, string>;
  /** What the report shows beside the figures, e.g. where the data lives. */
  description: string;
  dispose(): Promise<void>;
}

export function sqliteTarget(): DatabaseTarget {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'atrium-bench-'));
  return {
    dialect: 'sqlite',
    env: { DATA_DIR: dir },
    description: `SQLite file in ${dir}`,
    async dispose() {
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  // A short connect timeout: a missing PostgreSQL should cost the run a second, not the OS's TCP timeout.
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A schema of its own in the given PostgreSQL, or undefined (with the reason) when it does not answer. */
export async function postgresTarget(url: string): Promise<DatabaseTarget | { unavailable: string }> {
  const schema = `bench_${randomBytes(6).toString('hex')}`;
  try {
    await withClient(url, (c) => c.query(`create schema ${schema}`));
  } catch (err) {
    return { unavailable: `PostgreSQL at ${redact(url)} did not answer (${(err as Error).message})` };
  }
  return {
    dialect: 'postgres',
    env: { BENCH_DATABASE_URL: url, BENCH_PG_SCHEMA: schema },
    description: `PostgreSQL ${redact(url)}, schema ${schema}`,
    async dispose() {
      await withClient(url, (c) => c.query(`drop schema ${schema} cascade`));
    },
  };
}

function redact(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}
