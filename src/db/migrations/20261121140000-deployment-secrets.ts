// Secrets the whole deployment shares (every API process must agree on them), generated once here.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('deployment_secrets')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
  // Signs list cursors so that a forged or altered cursor is refused rather than followed.
  await db.insertInto('deployment_secrets').values({ name: 'cursor_signing_key', value: randomBytes(32).toString('base64url') }).execute();
}
