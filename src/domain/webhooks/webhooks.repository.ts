import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { WebhookDeliveriesTable, WebhookDeliveryAttemptsTable, WebhookSubscriptionsTable } from '../../db/tables.ts';
import { tenantRows } from '../../db/tenant-rows.ts';
import { skipLockedForUpdate } from '../../db/claims.ts';
import { deferredWrite } from '../../db/deferred-writes.ts';
import { changedColumnsSql, updateLiveInOneStatement, type ColumnChange } from '../one-statement-update.repository.ts';
import { deletionsRepository } from '../deletions/deletions.repository.ts';

export type SubscriptionRow = Selectable<WebhookSubscriptionsTable>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;
export type AttemptRow = Selectable<WebhookDeliveryAttemptsTable>;

/** What a PATCH asks of a subscription, as stored (lists and filters as their JSON text). */
export interface SubscriptionChanges {
  /** With `verifiedAt`: when the URL was verified, if it was (a URL that differs from the row's is). */
  url?: { url: string; verifiedAt: string | null };
  event_types?: string;
  filters?: string | null;
  description?: string | null;
  notification_emails?: string;
  rate_limit_per_minute?: number;
  status?: 'enabled' | 'disabled';
}

// A URL whose host PostgreSQL can write as `new URL(url).host` does (the event of a delete names it): an ASCII
// host name whose last label starts with a letter (so no number WHATWG would read as IPv4), not punycode, or an
// IPv4 address in its usual form, and maybe a port without leading zeros; right after `https://` (no user
// info) and followed by the path, query or fragment. Any other URL (rare) takes the full path, where
// JavaScript's URL writes it.
const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
const PLAIN_HOST = `^https://((?:[A-Za-z0-9-]+[.])*[A-Za-z][A-Za-z0-9-]*|(?:${OCTET}[.]){3}${OCTET})(?::([1-9][0-9]{0,4}))?(?:[/?#]|$)`;
const hostPart = (url: RawBuilder<unknown>, group: 1 | 2) => sql`(regexp_match(${url}, ${PLAIN_HOST}))[${sql.lit(group)}]`;
/** The premise that `url` is one of those. */
const hasPlainHost = (url: RawBuilder<unknown>) =>
  sql<boolean>`${url} ~ ${PLAIN_HOST} and ${url} !~* '^https://([^/?#]*[.])?xn--' and coalesce(${hostPart(url, 2)}::integer, 443) <= 65535`;
/** `new URL(url).host` of such a URL: lower case (ASCII only, whatever the database's locale), the port unless 443. */
const hostOf = (url: RawBuilder<unknown>) =>
  sql`translate(${hostPart(url, 1)}, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') || coalesce(':' || nullif(${hostPart(url, 2)}, '443'), '')`;

// What the service lists as changed, in its order (verified_at goes with the URL, unnamed).
const NAMED_IN_SUMMARY = ['url', 'event_types', 'filters', 'description', 'notification_emails', 'rate_limit_per_minute', 'status', 'disabled_reason', 'consecutive_failures'];

export const subscriptionsRepository = {
  ...tenantRows('webhook_subscriptions'),

  /**
   * PostgreSQL, as a final statement (db/final-statement.ts): the PATCH of a live subscription and its event
   * `{"id","summary"}`, as the service makes them: a new URL takes the time it was verified; a new status sets
   * the reason (and enabling clears the failure streak). The premise: no other live subscription has the URL
   * asked (the full path's 409).
   */
  updateInOneStatement(db: Db, organisationId: string, id: string, changes: SubscriptionChanges, at: string): Promise<SubscriptionRow> {
    const asked: ColumnChange[] = [];
    const premises: RawBuilder<boolean>[] = [];
    if (changes.url !== undefined) {
      const url = sql`${changes.url.url}::text`;
      asked.push(['url', url], ['verified_at', sql`case when b.url is distinct from ${url} then ${changes.url.verifiedAt}::timestamptz else b.verified_at end`]);
      premises.push(sql<boolean>`not exists (select 1 from webhook_subscriptions other where other.organisation_id = ${organisationId} and other.url = ${url} and other.deleted_at is null and other.id <> ${id})`);
    }
    for (const column of ['event_types', 'filters', 'description', 'notification_emails'] as const) {
      if (changes[column] !== undefined) asked.push([column, sql`${changes[column]}::text`]);
    }
    if (changes.rate_limit_per_minute !== undefined) asked.push(['rate_limit_per_minute', sql`${changes.rate_limit_per_minute}::integer`]);
    if (changes.status !== undefined) {
      const status = sql`${changes.status}::text`;
      const reason = changes.status === 'enabled' ? null : 'Disabled through the API.';
      asked.push(['status', status], ['disabled_reason', sql`case when b.status is distinct from ${status} then ${reason}::text else b.disabled_reason end`]);
      // Enabling again clears the failure streak, so one more failure does not disable it at once.
      if (changes.status === 'enabled') asked.push(['consecutive_failures', sql`case when b.status is distinct from ${status} then 0 else b.consecutive_failures end`]);
    }
    return updateLiveInOneStatement<SubscriptionRow>(
      db,
      'webhook_subscriptions',
      organisationId,
      id,
      asked,
      { type: 'webhook_subscription.updated', occurredAt: at, members: [['summary', sql`'Webhook subscription changed: ' || ${changedColumnsSql(NAMED_IN_SUMMARY)} || '.'`]] },
      { premises },
    );
  },

  /**
   * PostgreSQL, as a final statement: the delete of a live subscription whose URL has a plain host (above), with
   * its tombstone, its pending deliveries abandoned (abandonPendingOf), and its event `{"id","summary"}` naming the host.
   */
  deleteInOneStatement(db: Db, organisationId: string, id: string, at: string, reason: string): Promise<void> {
    return deletionsRepository.softDeleteInOneStatement(
      db,
      'webhook_subscriptions',
      'webhook_subscription',
      organisationId,
      id,
      { type: 'webhook_subscription.deleted', occurredAt: at, members: [['summary', sql`'Webhook subscription to ' || ${hostOf(sql`u.url`)} || ' deleted.'`]] },
      {
        set: [['status', sql`'disabled'`], ['disabled_reason', sql`'Deleted.'`]],
        premises: [hasPlainHost(sql.ref('url'))],
        effects: [
          [
            'abandoned',
            sql`update webhook_deliveries set status = 'failed', last_error = ${reason}::text, leased_until = null
              where organisation_id = ${organisationId} and subscription_id in (select u.id from u) and status = 'pending'`,
          ],
        ],
      },
    );
  },

  /** The premise of a new subscription or a move: no live subscription of the organisation has `url`. */
  urlFree: (organisationId: string, url: string) =>
    sql<boolean>`not exists(select 1 from webhook_subscriptions where organisation_id = ${organisationId} and url = ${url} and deleted_at is null)`,

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

  /**
   * A delivery already made and its attempt (a new subscription's verification ping), as deferred writes
   * (db/deferred-writes.ts): nobody reads them, so on PostgreSQL they ride with the transaction's next statement.
   */
  async insertDelivered(db: Db, delivery: DeliveryRow, attempt: AttemptRow): Promise<void> {
    await deferredWrite(db, db.insertInto('webhook_deliveries').values(delivery).onConflict((oc) => oc.columns(['event_id', 'subscription_id']).doNothing()));
    await deferredWrite(db, db.insertInto('webhook_delivery_attempts').values(attempt));
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

  /** A deferred write (db/deferred-writes.ts): nobody reads what it changed. */
  async abandonPendingOf(db: Db, organisationId: string, subscriptionId: string, reason: string): Promise<void> {
    await deferredWrite(
      db,
      db.updateTable('webhook_deliveries').set({ status: 'failed', last_error: reason, leased_until: null }).where('organisation_id', '=', organisationId).where('subscription_id', '=', subscriptionId).where('status', '=', 'pending'),
    );
  },
};
