// Webhook subscriptions, one delivery per (event, subscription), and the log of every delivery attempt.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { columnTypes } from '../column-types.ts';
import { createChangesIndex, createResourceTable, createTenantTable } from '../migration-tables.ts';

export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  await createResourceTable(db, 'webhook_subscriptions', (table) =>
    table
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('event_types', 'text', (c) => c.notNull())
      .addColumn('filters', 'text')
      .addColumn('description', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('notification_emails', 'text', (c) => c.notNull())
      .addColumn('rate_limit_per_minute', 'integer', (c) => c.notNull())
      .addColumn('payload_version', 'integer', (c) => c.notNull())
      // Signing secrets, encrypted at rest with the deployment key (they must be usable to sign, so not hashed).
      .addColumn('secret', 'text', (c) => c.notNull())
      .addColumn('previous_secret', 'text')
      .addColumn('previous_secret_expires_at', t.timestamp)
      .addColumn('verified_at', t.timestamp)
      .addColumn('consecutive_failures', 'integer', (c) => c.notNull())
      .addColumn('last_success_at', t.timestamp)
      .addColumn('disabled_reason', 'text'),
  ).execute();
  await db.schema.createIndex('webhook_subscriptions_org_status').on('webhook_subscriptions').columns(['organisation_id', 'status']).execute();
  await createChangesIndex(db, 'webhook_subscriptions');

  await createTenantTable(db, 'webhook_deliveries')
    .addColumn('subscription_id', t.uuid, (c) => c.notNull().references('webhook_subscriptions.id'))
    // The webhook-id header: the event's id, stable across retries and resends (receivers deduplicate on it).
    .addColumn('event_id', t.uuid, (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('first_attempt_at', t.timestamp)
    .addColumn('next_attempt_at', t.timestamp, (c) => c.notNull())
    .addColumn('leased_until', t.timestamp)
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('delivered_at', t.timestamp)
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addUniqueConstraint('webhook_deliveries_event_subscription', ['event_id', 'subscription_id'])
    .execute();
  await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('webhook_deliveries_subscription').on('webhook_deliveries').columns(['subscription_id', 'id']).execute();

  await db.schema
    .createTable('webhook_delivery_attempts')
    .addColumn('id', t.uuid, (c) => c.primaryKey())
    .addColumn('delivery_id', t.uuid, (c) => c.notNull().references('webhook_deliveries.id'))
    .addColumn('attempted_at', t.timestamp, (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('response_body', 'text')
    .execute();
  await db.schema.createIndex('webhook_delivery_attempts_delivery').on('webhook_delivery_attempts').columns(['delivery_id', 'attempted_at']).execute();

  // Encrypts webhook signing secrets at rest.
  await db.insertInto('deployment_secrets').values({ name: 'webhook_secret_key', value: randomBytes(32).toString('base64url') }).execute();
}
