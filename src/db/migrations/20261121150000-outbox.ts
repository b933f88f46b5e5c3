// The transactional outbox: every change writes its event here in the same transaction (ARCHITECTURE rule 5),
// so no event is lost and none is sent for a rolled-back change. Delivery reads from here.
import type { Kysely } from 'kysely';
import { columnTypes } from '../column-types.ts';
import { createTenantTable } from '../migration-tables.ts';

export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  await createTenantTable(db, 'outbox_events')
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('occurred_at', t.timestamp, (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    // Set once the event has been fanned out to the matching subscriptions (webhook delivery).
    .addColumn('dispatched_at', t.timestamp)
    .execute();
  await db.schema.createIndex('outbox_events_pending').on('outbox_events').columns(['dispatched_at', 'id']).execute();
  await db.schema.createIndex('outbox_events_org').on('outbox_events').columns(['organisation_id', 'id']).execute();
}
