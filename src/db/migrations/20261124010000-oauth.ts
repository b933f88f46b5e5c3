// OAuth 2 (docs/authentication.md#oauth-2): clients registered per organisation, and what each organisation's authorization
// server keeps (grants, codes, tokens, sessions, interactions). Bearer values are never stored: a record is
// found by the SHA-256 of its id, and a client secret is kept only as its SHA-256.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { columnTypes } from '../column-types.ts';
import { changeTimes, createTenantTable } from '../migration-tables.ts';

export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);

  await createTenantTable(db, 'oauth_clients')
    .addColumn('client_id', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'text')
    .addColumn('redirect_uris', 'text', (c) => c.notNull())
    .addColumn('grant_types', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('service_person_id', t.uuid, (c) => c.references('people.id'))
    .addColumn('service_version', 'text', (c) => c.notNull())
    .addColumn('self_registered', t.bool, (c) => c.notNull())
    // The rest of a self-registered client's metadata (RFC 7591), as it registered it.
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('created_by', t.uuid)
    .$call(changeTimes(db))
    .execute();
  await db.schema.createIndex('oauth_clients_org').on('oauth_clients').columns(['organisation_id', 'created_at']).execute();

  await db.schema
    .createTable('oauth_records')
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('id_hash', 'text', (c) => c.notNull())
    .addColumn('organisation_id', t.uuid, (c) => c.notNull().references('organisations.id'))
    .addColumn('client_id', 'text')
    .addColumn('account_id', 'text')
    .addColumn('grant_id', 'text')
    .addColumn('uid', 'text')
    .addColumn('expires_at', t.timestamp)
    .addColumn('consumed_at', t.timestamp)
    .addColumn('payload', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('oauth_records_pk', ['model', 'id_hash'])
    .execute();
  await db.schema.createIndex('oauth_records_grant').on('oauth_records').columns(['organisation_id', 'grant_id']).execute();
  await db.schema.createIndex('oauth_records_client').on('oauth_records').columns(['organisation_id', 'client_id', 'model', 'account_id']).execute();
  await db.schema.createIndex('oauth_records_account').on('oauth_records').columns(['organisation_id', 'account_id']).execute();
  await db.schema.createIndex('oauth_records_uid').on('oauth_records').columns(['model', 'uid']).execute();
  await db.schema.createIndex('oauth_records_expiry').on('oauth_records').column('expires_at').execute();

  // Shared by every API process: the key that signs the authorization servers' cookies, and their signing key.
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  await db
    .insertInto('deployment_secrets')
    .values([
      { name: 'oauth_cookie_key', value: randomBytes(32).toString('base64url') },
      { name: 'oauth_signing_jwk', value: JSON.stringify({ ...privateKey.export({ format: 'jwk' }), alg: 'ES256', use: 'sig', kid: randomBytes(8).toString('hex') }) },
    ])
    .execute();
}
