// Signing in (docs/authentication.md#signing-in-and-the-admin-area): server-side sessions, failed sign-ins counted for the lockout, and people
// who can be removed (a removed person's sessions and credentials stop working at once).
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { columnTypes } from '../column-types.ts';
import { createTenantTable } from '../migration-tables.ts';

export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);

  await db.schema.alterTable('people').addColumn('deleted_at', t.timestamp).execute();

  // The cookie carries a random token; only its SHA-256 is stored, so a copy of this table opens no session.
  await db.schema
    .createTable('sessions')
    .addColumn('id', t.uuid, (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('organisation_id', t.uuid, (c) => c.notNull().references('organisations.id'))
    .addColumn('person_id', t.uuid, (c) => c.notNull().references('people.id'))
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('last_seen_at', t.timestamp, (c) => c.notNull())
    .addColumn('expires_at', t.timestamp, (c) => c.notNull())
    // A message for the next page (post/redirect/get), sealed with a key derived from the session token.
    .addColumn('flash', 'text')
    .execute();
  await db.schema.createIndex('sessions_person').on('sessions').column('person_id').execute();
  await db.schema.createIndex('sessions_expiry').on('sessions').column('expires_at').execute();

  await createTenantTable(db, 'login_failures')
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('client_address', 'text', (c) => c.notNull())
    .addColumn('failed_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('login_failures_email').on('login_failures').columns(['organisation_id', 'email', 'failed_at']).execute();
  await db.schema.createIndex('login_failures_client').on('login_failures').columns(['client_address', 'failed_at']).execute();

  // Binds CSRF tokens to their session (@fastify/csrf-protection's hmacKey); every API process must agree on it.
  await db.insertInto('deployment_secrets').values({ name: 'csrf_hmac_key', value: randomBytes(32).toString('base64url') }).execute();
}
