// Idempotency records and deletion tombstones (shared conventions on every operation).
import type { Kysely } from 'kysely';
import { columnTypes } from '../column-types.ts';
import { createChangesIndex, createTenantTable } from '../migration-tables.ts';

export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);

  // spec: Conventions — Idempotency-Key. Keyed by (organisation, credential, key); committed with the effect.
  await db.schema
    .createTable('idempotency_records')
    .addColumn('organisation_id', t.uuid, (c) => c.notNull().references('organisations.id'))
    .addColumn('credential_id', t.uuid, (c) => c.notNull())
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('response_status', 'integer', (c) => c.notNull())
    .addColumn('response_body', 'text')
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('expires_at', t.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_records_pk', ['organisation_id', 'credential_id', 'idempotency_key'])
    .execute();
  await db.schema.createIndex('idempotency_records_expiry').on('idempotency_records').column('expires_at').execute();

  // docs/conventions.md#lists — `GET /<resource>/deletions` lists tombstones {id, external_id, deleted_at}.
  await createTenantTable(db, 'deletions')
    .addColumn('resource_type', 'text', (c) => c.notNull())
    .addColumn('resource_id', t.uuid, (c) => c.notNull())
    .addColumn('external_id', 'text')
    .addColumn('deleted_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('deletions_feed').on('deletions').columns(['organisation_id', 'resource_type', 'deleted_at', 'id']).execute();

  // Changes-since feeds order by (updated_at, id).
  for (const table of ['categories', 'courses', 'sections']) await createChangesIndex(db, table);
}
