// Delivering: due deliveries are leased (so another worker leaves them alone, and a crashed worker's lease
// simply runs out), sent signed to the address the SSRF guard checked, and every attempt is logged with the
// delivery's new state and the subscription's health in one transaction.
//
// Rules (docs/webhooks.md): 2xx succeeds; anything else fails, 3xx included (redirects are not followed);
// 410 disables the subscription; Retry-After on 429/503 is honoured; 15 s per attempt; retries widen with
// jitter within 72 hours of the first attempt (retry-policy.ts); `rate_limit_per_minute` delays, never drops;
// after a long run of failures with no success for a day, the subscription is `auto_disabled` and its
// notification addresses get a mail.
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import type { EventRecorder } from '../../events/outbox.ts';
import { newId } from '../../ids.ts';
import { UnsafeEndpoint, type EndpointGuard, type ResolvedEndpoint } from '../../net/endpoint-guard.ts';
import type { HttpSender, SendResult } from './http-sender.ts';
import { nextAttemptAt } from './retry-policy.ts';
import { webhookDeliveryAttempts, type DeliveryResult } from '../../metrics/instruments.ts';
import type { SecretBox } from '../../crypto/secret-box.ts';
import { signatureHeaders } from './signing.ts';
import { deliveriesRepository, subscriptionsRepository, type DeliveryRow, type SubscriptionRow } from './webhooks.repository.ts';

export const DELIVERY_TIMEOUT_MS = 15_000;
const BATCH = 200;
const CONCURRENCY = 32;
/** Failures in a row before a subscription may be disabled, and how long without any success. */
export const AUTO_DISABLE_FAILURES = 20;
export const AUTO_DISABLE_WITHOUT_SUCCESS_MS = 24 * 3600_000;
/** A disabled subscription's deliveries wait; they are looked at again after this. */
const PAUSED_RECHECK_MS = 60_000;

/** Mails the addresses; `adminPath` is a page of the organisation's admin area, linked at its public origin. */
export type Notify = (organisationId: string, to: string[], subject: string, text: string, adminPath: string) => Promise<void>;

export interface DelivererDeps {
  db: Db;
  clock: Clock;
  guard: EndpointGuard;
  send: HttpSender;
  secrets: SecretBox;
  events: EventRecorder;
  notify: Notify;
  /** Longer than an attempt can take (15 s), so a live worker never loses a delivery it is sending. */
  leaseMs: number;
}

interface Outcome {
  result: SendResult;
  attemptedAt: Date;
}

export function createWebhookDeliverer(deps: DelivererDeps) {
  const { db, clock, guard, send, secrets, events, notify, leaseMs } = deps;

  async function claim(now: Date): Promise<string[]> {
    return db.transaction().execute(async (tx) => {
      const ids = await deliveriesRepository.claimDue(tx, now.toISOString(), BATCH);
      if (ids.length > 0) await tx.updateTable('webhook_deliveries').set({ leased_until: new Date(now.getTime() + leaseMs).toISOString() }).where('id', 'in', ids).execute();
      return ids;
    });
  }

  function signingSecrets(s: SubscriptionRow, now: Date): string[] {
    const list = [secrets.open(s.secret)];
    if (s.previous_secret && s.previous_secret_expires_at && s.previous_secret_expires_at > now.toISOString()) list.push(secrets.open(s.previous_secret));
    return list;
  }

  async function attempt(delivery: DeliveryRow, subscription: SubscriptionRow, endpoint: ResolvedEndpoint | Error, signal: AbortSignal | undefined): Promise<Outcome> {
    const attemptedAt = clock.now();
    if (endpoint instanceof Error) {
      return { attemptedAt, result: { statusCode: null, retryAfter: null, responseBody: null, error: `refused before sending: ${endpoint.message}`, durationMs: 0 } };
    }
    // The signature's timestamp is wall-clock time: receivers reject one more than five minutes off theirs.
    const headers = signatureHeaders(delivery.event_id, new Date(), delivery.payload, signingSecrets(subscription, attemptedAt));
    return { attemptedAt, result: await send(endpoint, headers, delivery.payload, DELIVERY_TIMEOUT_MS, signal) };
  }

  async function record(delivery: DeliveryRow, subscription: SubscriptionRow, { result, attemptedAt }: Outcome): Promise<void> {
    const at = attemptedAt.toISOString();
    const attempts = Number(delivery.attempts) + 1;
    const firstAttemptAt = delivery.first_attempt_at ?? at;
    const autoDisable = { value: false };
    await db.transaction().execute(async (tx: Db) => {
      await deliveriesRepository.insertAttempt(tx, {
        id: newId(),
        delivery_id: delivery.id,
        attempted_at: at,
        status_code: result.statusCode,
        error: result.error,
        duration_ms: result.durationMs,
        response_body: result.responseBody,
      });
      const base = { attempts, first_attempt_at: firstAttemptAt, leased_until: null, last_status_code: result.statusCode, last_error: result.error };
      const health = await subscriptionsRepository.recordFailure(tx, subscription.id);
      const failures = Number(health.consecutive_failures);
      if (result.statusCode === 410) {
        await deliveriesRepository.update(tx, delivery.id, { ...base, status: 'failed' });
        await subscriptionsRepository.updateHealth(tx, subscription.id, { status: 'disabled', disabled_reason: 'The endpoint answered 410 Gone.', updated_at: at });
        return;
      }
      const retryAfter = result.statusCode === 429 || result.statusCode === 503 ? result.retryAfter : null;
      const next = nextAttemptAt(Date.parse(firstAttemptAt), attemptedAt.getTime(), attempts, retryAfter);
      await deliveriesRepository.update(tx, delivery.id, next === null ? { ...base, status: 'failed' } : { ...base, next_attempt_at: new Date(next).toISOString() });
      const lastSuccess = Date.parse(health.last_success_at ?? health.created_at);
      if (failures >= AUTO_DISABLE_FAILURES && attemptedAt.getTime() - lastSuccess >= AUTO_DISABLE_WITHOUT_SUCCESS_MS && health.status === 'enabled') {
        autoDisable.value = true;
        const reason = `Disabled after ${failures} failed deliveries in a row and none succeeding since ${new Date(lastSuccess).toISOString()}; last answer: ${result.statusCode ?? result.error}.`;
        await subscriptionsRepository.updateHealth(tx, subscription.id, { status: 'auto_disabled', disabled_reason: reason, updated_at: at });
        await events.record(tx, subscription.organisation_id, 'webhook_subscription.auto_disabled', { id: subscription.id, summary: reason.slice(0, 200) });
      }
    });
    if (autoDisable.value) {
      subscription.status = 'auto_disabled';
      const to = JSON.parse(subscription.notification_emails) as string[];
      if (to.length > 0) {
        await notify(
          subscription.organisation_id,
          to,
          'Webhook subscription disabled',
          `Deliveries to ${subscription.url} kept failing, so the subscription ${subscription.id} was disabled.\n` +
            `Fix the endpoint, then enable the subscription again (PATCH status: enabled, or Enable on its page). Failed deliveries can be resent from its delivery log.`,
          `/admin/webhooks/${subscription.id}`,
        );
      }
    }
  }

  /**
   * The successes of a batch, recorded together: one transaction, one multi-row insert of attempts, one
   * update per status code and one per subscription — per-delivery transactions would cap throughput.
   */
  async function recordSuccesses(successes: Array<{ delivery: DeliveryRow; subscription: SubscriptionRow; outcome: Outcome }>): Promise<void> {
    if (successes.length === 0) return;
    await db.transaction().execute(async (tx: Db) => {
      const attempts = successes.map(({ delivery, outcome }) => ({
        id: newId(),
        delivery_id: delivery.id,
        attempted_at: outcome.attemptedAt.toISOString(),
        status_code: outcome.result.statusCode,
        error: null,
        duration_ms: outcome.result.durationMs,
        response_body: outcome.result.responseBody,
      }));
      for (let i = 0; i < attempts.length; i += 200) await deliveriesRepository.insertAttempts(tx, attempts.slice(i, i + 200));
      const byCode = new Map<number, { ids: string[]; at: string }>();
      const bySubscription = new Map<string, string>();
      for (const { delivery, subscription, outcome } of successes) {
        const at = outcome.attemptedAt.toISOString();
        const group = byCode.get(outcome.result.statusCode!) ?? { ids: [], at };
        group.ids.push(delivery.id);
        if (at > group.at) group.at = at;
        byCode.set(outcome.result.statusCode!, group);
        if (at > (bySubscription.get(subscription.id) ?? '')) bySubscription.set(subscription.id, at);
      }
      for (const [code, { ids, at }] of byCode) await deliveriesRepository.markSucceeded(tx, ids, code, at);
      for (const [id, at] of bySubscription) await subscriptionsRepository.updateHealth(tx, id, { consecutive_failures: 0, last_success_at: at });
    });
  }

  async function postpone(delivery: DeliveryRow, until: Date): Promise<void> {
    await deliveriesRepository.update(db, delivery.id, { next_attempt_at: until.toISOString(), leased_until: null });
  }

  /** One batch of due deliveries; returns how many it handled (0: none due). */
  return async function deliverDue(signal?: AbortSignal): Promise<number> {
    const now = clock.now();
    const ids = await claim(now);
    if (ids.length === 0) return 0;
    const deliveries = await deliveriesRepository.byIds(db, ids);
    const subscriptionIds = [...new Set(deliveries.map((d) => d.subscription_id))];
    const subscriptions = new Map((await subscriptionsRepository.byIds(db, subscriptionIds)).map((s) => [s.id, s]));
    const recent = await deliveriesRepository.recentAttempts(db, subscriptionIds, new Date(now.getTime() - 60_000).toISOString());
    // The guard runs once per subscription and batch: every delivery connects to the address checked here.
    const endpoints = new Map<string, Promise<ResolvedEndpoint | Error>>();
    const endpointOf = (s: SubscriptionRow) => {
      let e = endpoints.get(s.id);
      if (!e) {
        e = guard.resolve(s.url).catch((err: unknown) => (err instanceof UnsafeEndpoint ? err : new Error(String(err))));
        endpoints.set(s.id, e);
      }
      return e;
    };

    const successes: Array<{ delivery: DeliveryRow; subscription: SubscriptionRow; outcome: Outcome }> = [];
    const queue = [...deliveries].sort((a, b) => a.next_attempt_at.localeCompare(b.next_attempt_at) || a.id.localeCompare(b.id));
    async function work(): Promise<void> {
      // Checked before taking the next one, so that what is left at shutdown stays in `queue` to hand back.
      for (let d = signal?.aborted ? undefined : queue.shift(); d; d = signal?.aborted ? undefined : queue.shift()) {
        const subscription = subscriptions.get(d.subscription_id);
        if (!subscription || subscription.deleted_at !== null) {
          await deliveriesRepository.update(db, d.id, { status: 'failed', last_error: 'The subscription was deleted.', leased_until: null });
          continue;
        }
        if (subscription.status !== 'enabled') {
          await postpone(d, new Date(now.getTime() + PAUSED_RECHECK_MS));
          continue;
        }
        const used = recent.get(subscription.id) ?? 0;
        if (used >= Number(subscription.rate_limit_per_minute)) {
          // spec: rate_limit_per_minute delays, never drops.
          await postpone(d, new Date(now.getTime() + Math.ceil(60_000 / Number(subscription.rate_limit_per_minute)) * (used - Number(subscription.rate_limit_per_minute) + 1)));
          recent.set(subscription.id, used + 1);
          continue;
        }
        recent.set(subscription.id, used + 1);
        const endpoint = await endpointOf(subscription);
        const outcome = await attempt(d, subscription, endpoint, signal);
        const code = outcome.result.statusCode;
        // An attempt the shutdown cut short is no failure of the endpoint's: handed back, it is sent again.
        if (code === null && signal?.aborted && !(endpoint instanceof Error)) {
          abandoned.push(d.id);
          continue;
        }
        const result: DeliveryResult = endpoint instanceof Error ? 'refused' : code === null ? 'network_error' : code >= 200 && code < 300 ? 'success' : 'http_error';
        webhookDeliveryAttempts.inc({ result });
        if (result === 'success') successes.push({ delivery: d, subscription, outcome });
        else await record(d, subscription, outcome);
      }
    }
    const abandoned: string[] = [];
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, work));
    await recordSuccesses(successes);
    // docs/operating.md#starting-losing-the-database-stopping — a stopping worker hands back what it claimed and did not finish, so another
    // worker (or the next start) delivers it at once rather than after the lease. If even that fails (the
    // database is away), the lease simply runs out.
    const handBack = [...abandoned, ...queue.map((d) => d.id)];
    if (handBack.length > 0) await deliveriesRepository.releaseLeases(db, handBack);
    return ids.length;
  };
}
