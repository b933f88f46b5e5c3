import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { WebhookDeliveriesTable, WebhookDeliveryAttemptsTable, WebhookSubscriptionsTable } from '../../db/tables.ts';
import { tenantRows } from '../../db/tenant-rows.ts';
import { skipLockedForUpdate } from '../../db/claims.ts';

export type SubscriptionRow = Selectable<WebhookSubscriptionsTable>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;
export type AttemptRow = Selectable<WebhookDeliveryAttemptsTable>;

export const subscriptionsRepository = {
  ...tenantRows('webhook_subscriptions'),

  findLiveByUrl(db: Db, organisationId: string, url: string) {
    return db.selectFrom('webhook_subscriptions').select('id').where('organisation_id', '=', organisationId).where('url', '=', url).where('deleted_at', 'is', null).executeTakeFirst();
  },

  /** Enabled subscriptions of several organisations at once (fan-out of a batch of events). */
  enabledFor(db: Db, organisationIds: string[]): Promise<SubscriptionRow[]> {
    if (organisationIds.length === 0) return Promise.resolve([]);
    return db.selectFrom('webhook_subscriptions').selectAll().where('organisation_id', 'in', organisationIds).where('status', '=', 'enabled').where('deleted_at', 'is', null).execute();
  },

  byIds(db: Db, ids: string[]): Promise<SubscriptionRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return db.selectFrom('webhook_subscriptions').selectAll().where('id', 'in', ids).execute();
  },

  async updateHealth(db: Db, id: string, patch: Partial<SubscriptionRow>): Promise<void> {
    await db.updateTable('webhook_subscriptions').set(patch).where('id', '=', id).execute();
  },

  /** Counts one more failure in the database itself: concurrent deliveries to one subscription each add one. */
  recordFailure(db: Db, id: string) {
    return db
      .updateTable('webhook_subscriptions')
      .set((eb) => ({ consecutive_failures: eb('consecutive_failures', '+', 1) }))
      .where('id', '=', id)
      .returning(['consecutive_failures', 'last_success_at', 'status', 'created_at'])
      .executeTakeFirstOrThrow();
  },
};

export const deliveriesRepository = {
  /** Ids of up to `limit` pending deliveries that are due and not leased by a live worker (others' claims skipped). */
  async claimDue(tx: Db, now: string, limit: number): Promise<string[]> {
    const query = tx
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where((eb) => eb.or([eb('leased_until', 'is', null), eb('leased_until', '<', now)]))
      .orderBy('next_attempt_at')
      .limit(limit);
    return (await skipLockedForUpdate(tx, query).execute()).map((r) => r.id);
  },

  async insertMany(db: Db, rows: DeliveryRow[]): Promise<void> {
    if (rows.length === 0) return;
    await db
      .insertInto('webhook_deliveries')
      .values(rows)
      .onConflict((oc) => oc.columns(['event_id', 'subscription_id']).doNothing())
      .execute();
  },

  find(db: Db, organisationId: string, subscriptionId: string, id: string) {
    return db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('organisation_id', '=', organisationId)
      .where('subscription_id', '=', subscriptionId)
      .where('id', '=', id)
      .executeTakeFirst();
  },

  page(db: Db, organisationId: string, subscriptionId: string, q: { after?: string; limit: number }) {
    let query = db.selectFrom('webhook_deliveries').selectAll().where('organisation_id', '=', organisationId).where('subscription_id', '=', subscriptionId);
    if (q.after) query = query.where('id', '<', q.after);
    return query.orderBy('id', 'desc').limit(q.limit + 1).execute();
  },

  attemptsOf(db: Db, deliveryIds: string[]): Promise<AttemptRow[]> {
    if (deliveryIds.length === 0) return Promise.resolve([]);
    return db.selectFrom('webhook_delivery_attempts').selectAll().where('delivery_id', 'in', deliveryIds).orderBy('attempted_at').execute();
  },

  byIds(db: Db, ids: string[]): Promise<DeliveryRow[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return db.selectFrom('webhook_deliveries').selectAll().where('id', 'in', ids).execute();
  },

  async update(db: Db, id: string, patch: Partial<DeliveryRow>): Promise<void> {
    await db.updateTable('webhook_deliveries').set(patch).where('id', '=', id).execute();
  },

  /** Hands claimed deliveries back (a worker stopping): due again at once for any worker, as if never claimed. */
  async releaseLeases(db: Db, ids: string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += 200) {
      await db.updateTable('webhook_deliveries').set({ leased_until: null }).where('id', 'in', ids.slice(i, i + 200)).where('status', '=', 'pending').execute();
    }
  },

  async insertAttempt(db: Db, row: AttemptRow): Promise<void> {
    await db.insertInto('webhook_delivery_attempts').values(row).execute();
  },

  async insertAttempts(db: Db, rows: AttemptRow[]): Promise<void> {
    if (rows.length > 0) await db.insertInto('webhook_delivery_attempts').values(rows).execute();
  },

  async markSucceeded(db: Db, ids: string[], statusCode: number, at: string): Promise<void> {
    await db
      .updateTable('webhook_deliveries')
      .set((eb) => ({
        status: 'succeeded',
        delivered_at: at,
        attempts: eb('attempts', '+', 1),
        first_attempt_at: eb.fn.coalesce('first_attempt_at', eb.val(at)),
        leased_until: null,
        last_status_code: statusCode,
        last_error: null,
      }))
      .where('id', 'in', ids)
      .execute();
  },

  /** Attempts per subscription since `since`, for rate_limit_per_minute. */
  async recentAttempts(db: Db, subscriptionIds: string[], since: string): Promise<Map<string, number>> {
    if (subscriptionIds.length === 0) return new Map();
    const rows = await db
      .selectFrom('webhook_delivery_attempts as a')
      .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
      .select(['d.subscription_id', (eb) => eb.fn.countAll<number>().as('n')])
      .where('d.subscription_id', 'in', subscriptionIds)
      .where('a.attempted_at', '>', since)
      .groupBy('d.subscription_id')
      .execute();
    return new Map(rows.map((r) => [r.subscription_id, Number(r.n)]));
  },

  async abandonPendingOf(db: Db, subscriptionId: string, reason: string): Promise<void> {
    await db.updateTable('webhook_deliveries').set({ status: 'failed', last_error: reason, leased_until: null }).where('subscription_id', '=', subscriptionId).where('status', '=', 'pending').execute();
  },
};
