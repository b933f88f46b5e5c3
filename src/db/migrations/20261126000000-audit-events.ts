// The organisation's audit log (docs/audit-log.md): one row per change of state and per write refused with 403.
// Rows are only ever inserted, and deleted by the retention job. Lists read newest first by id (UUIDv7, so in
// order of time) within an organisation, optionally narrowed to one actor, one target or one action: an index
// for each keeps those pages a range read. `occurred_at` is indexed for the retention job's deletes.
// No foreign keys: an entry must outlive what it names (a deleted key, a removed person), and an insert on
// every write should not pay for checking them.
import type { Kysely } from 'kysely';
import { columnTypes } from '../column-types.ts';

export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  await db.schema
    .createTable('audit_events')
    .addColumn('id', t.uuid, (c) => c.primaryKey())
    .addColumn('organisation_id', t.uuid, (c) => c.notNull())
    .addColumn('occurred_at', t.timestamp, (c) => c.notNull())
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text')
    .addColumn('actor_name', 'text')
    .addColumn('credential_kind', 'text')
    .addColumn('credential_id', 'text')
    .addColumn('via', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target_type', 'text')
    .addColumn('target_id', 'text')
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('request_id', 'text')
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    // JSON array of field names, never their values.
    .addColumn('changed_fields', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_events_org_id').on('audit_events').columns(['organisation_id', 'id']).execute();
  await db.schema.createIndex('audit_events_actor').on('audit_events').columns(['organisation_id', 'actor_id', 'id']).execute();
  await db.schema.createIndex('audit_events_target').on('audit_events').columns(['organisation_id', 'target_type', 'target_id', 'id']).execute();
  await db.schema.createIndex('audit_events_action').on('audit_events').columns(['organisation_id', 'action', 'id']).execute();
  await db.schema.createIndex('audit_events_occurred_at').on('audit_events').column('occurred_at').execute();
}
