// Webhook subscriptions (spec operation 6; docs/webhooks.md) and their delivery log. Creating one, or
// moving it to a new URL, first checks the URL with the SSRF guard and sends a signed `webhook.ping`; only a
// 2xx answer lets it in. The ping happens in `prepare…`, before the transaction, so no database lock is held
// while we wait on somebody else's server.
import type { Static } from 'typebox';
import { type Clock, nowIso } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import { insertWithExternalId } from '../external-ids.ts';
import type { EventRecorder } from '../../events/outbox.ts';
import { ApiError, fieldError } from '../../errors/api-error.ts';
import { foundOr404 } from '../resource-rows.ts';
import type { CursorCodec } from '../../operations/pagination.ts';
import { newId } from '../../ids.ts';
import { deletionsRepository } from '../deletions/deletions.repository.ts';
import { listPage, type ListParams } from '../../operations/listing.ts';
import { UnsafeEndpoint, type EndpointGuard } from '../../net/endpoint-guard.ts';
import type { HttpSender } from './http-sender.ts';
import { deliveryBody, isValidEventPattern, type Filters } from './matching.ts';
import type { SecretBox } from '../../crypto/secret-box.ts';
import { generateSigningSecret } from './secrets.ts';
import { signatureHeaders } from './signing.ts';
import type { CreateWebhookSubscription, UpdateWebhookSubscription, WebhookDelivery, WebhookSubscription } from './webhooks.schemas.ts';
import { deliveriesRepository, subscriptionsRepository, type AttemptRow, type DeliveryRow, type SubscriptionChanges, type SubscriptionRow } from './webhooks.repository.ts';
import { finalStatementOffered } from '../../db/final-statement.ts';
import { requirePremise } from '../../db/deferred-writes.ts';

const PING_TIMEOUT_MS = 10_000;
const ROTATION_GRACE_MS = 24 * 3600_000;
// Without a limit asked for, the highest the spec allows: throttling is for receivers that need it.
const DEFAULT_RATE_PER_MINUTE = 6000;
/** What a delivery still pending when its subscription is deleted says of why it was not tried again. */
const ABANDONED_ON_DELETE = 'The subscription was deleted.';

type View = Static<typeof WebhookSubscription>;

export const toSubscriptionView = (r: SubscriptionRow): View => ({
  id: r.id,
  external_id: r.external_id,
  url: r.url,
  event_types: JSON.parse(r.event_types) as string[],
  filters: r.filters === null ? null : (JSON.parse(r.filters) as Record<string, string | string[]>),
  description: r.description,
  status: r.status,
  notification_emails: JSON.parse(r.notification_emails) as string[],
  rate_limit_per_minute: Number(r.rate_limit_per_minute),
  payload_version: Number(r.payload_version),
  verified_at: r.verified_at,
  consecutive_failures: Number(r.consecutive_failures),
  last_success_at: r.last_success_at,
  disabled_reason: r.disabled_reason,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

function toDeliveryView(r: DeliveryRow, attempts: AttemptRow[]): Static<typeof WebhookDelivery> {
  return {
    id: r.id,
    event_id: r.event_id,
    event_type: r.event_type,
    status: r.status,
    attempts: Number(r.attempts),
    next_attempt_at: r.status === 'pending' ? r.next_attempt_at : null,
    last_status_code: r.last_status_code === null ? null : Number(r.last_status_code),
    last_error: r.last_error,
    delivered_at: r.delivered_at,
    created_at: r.created_at,
    attempt_log: attempts.map((a) => ({ attempted_at: a.attempted_at, status_code: a.status_code === null ? null : Number(a.status_code), error: a.error, duration_ms: Number(a.duration_ms), response_body: a.response_body })),
  };
}

function checkEventTypes(types: string[]): string[] {
  types.forEach((t, i) => {
    if (!isValidEventPattern(t)) throw fieldError(`/event_types/${i}`, 'unknown_event_type', `${JSON.stringify(t)} is not an event type of GET /event_types, an area (\`area.*\`) or \`*\`.`);
  });
  return [...new Set(types)];
}

export interface WebhookServiceDeps {
  clock: Clock;
  cursors: CursorCodec;
  events: EventRecorder;
  guard: EndpointGuard;
  send: HttpSender;
  secrets: SecretBox;
}

/** The verification ping as it was sent and answered. */
export interface VerificationPing {
  eventId: string;
  payload: string;
  attemptedAt: string;
  statusCode: number;
  durationMs: number;
  responseBody: string | null;
}

export interface VerifiedEndpoint {
  subscriptionId: string;
  secret: string;
  verifiedAt: string;
  /** Absent where no ping was sent (test factories). */
  ping?: VerificationPing;
}

export function createWebhookService(deps: WebhookServiceDeps) {
  const { clock, cursors, events, guard, send, secrets } = deps;

  /** The SSRF check and the signed ping; a 422 at /url for anything but a 2xx answer. */
  async function verifyEndpoint(url: string, subscriptionId: string, secret: string): Promise<VerificationPing> {
    let endpoint;
    try {
      endpoint = await guard.resolve(url);
    } catch (err) {
      if (err instanceof UnsafeEndpoint) throw fieldError('/url', 'unsafe_url', `The URL cannot receive webhooks: ${err.message}.`);
      throw err;
    }
    const eventId = newId();
    const attemptedAt = nowIso(clock);
    const payload = deliveryBody('webhook.ping', attemptedAt, { id: subscriptionId, summary: 'Verifies that this endpoint accepts deliveries.' });
    // Signed at wall-clock time: the receiver compares webhook-timestamp with its own clock.
    const result = await send(endpoint, signatureHeaders(eventId, new Date(), payload, [secret]), payload, PING_TIMEOUT_MS);
    if (result.statusCode === null || result.statusCode < 200 || result.statusCode >= 300) {
      const answer = result.statusCode === null ? `no answer (${result.error})` : `HTTP ${result.statusCode}`;
      throw fieldError('/url', 'verification_failed', `The endpoint did not accept the verification \`webhook.ping\`: ${answer}. It must answer 2xx.`);
    }
    return { eventId, payload, attemptedAt, statusCode: result.statusCode, durationMs: Math.round(result.durationMs), responseBody: result.responseBody };
  }

  /** The answered ping goes into the delivery log as the subscription's first delivery, so it can be seen and resent. */
  async function logPing(db: Db, organisationId: string, subscriptionId: string, ping: VerificationPing): Promise<void> {
    const deliveryId = newId();
    await deliveriesRepository.insertDelivered(
      db,
      {
        id: deliveryId,
        organisation_id: organisationId,
        subscription_id: subscriptionId,
        event_id: ping.eventId,
        event_type: 'webhook.ping',
        payload: ping.payload,
        status: 'succeeded',
        attempts: 1,
        first_attempt_at: ping.attemptedAt,
        next_attempt_at: ping.attemptedAt,
        leased_until: null,
        last_status_code: ping.statusCode,
        last_error: null,
        delivered_at: ping.attemptedAt,
        created_at: ping.attemptedAt,
      },
      { id: newId(), delivery_id: deliveryId, attempted_at: ping.attemptedAt, status_code: ping.statusCode, error: null, duration_ms: ping.durationMs, response_body: ping.responseBody },
    );
  }

  async function live(db: Db, organisationId: string, id: string): Promise<SubscriptionRow> {
    const row = await subscriptionsRepository.findById(db, organisationId, id);
    if (!row || row.deleted_at !== null) throw new ApiError('webhook_subscription.not_found', `No webhook subscription ${id} in this organisation.`);
    return row;
  }

  return {
    /** spec: operation 6, before the transaction: checks, then the ping. */
    async prepareCreate(input: Static<typeof CreateWebhookSubscription>): Promise<VerifiedEndpoint> {
      checkEventTypes(input.event_types);
      const subscriptionId = newId();
      const secret = generateSigningSecret();
      const ping = await verifyEndpoint(input.url, subscriptionId, secret);
      return { subscriptionId, secret, verifiedAt: ping.attemptedAt, ping };
    },

    async create(db: Db, organisationId: string, input: Static<typeof CreateWebhookSubscription>, verified: VerifiedEndpoint) {
      // Two subscriptions to one URL would deliver every event twice: almost always a mistake.
      // Checked with the writes, not before them: on PostgreSQL the check travels with them and the COMMIT.
      await requirePremise(db, subscriptionsRepository.urlFree(organisationId, input.url), 'webhook url free', () =>
        new ApiError('webhook_subscription.url_taken', 'This organisation already has a subscription for that URL; change its event types instead.'),
      );
      const at = nowIso(clock);
      const row: SubscriptionRow = {
        id: verified.subscriptionId,
        organisation_id: organisationId,
        external_id: input.external_id ?? null,
        url: input.url,
        event_types: JSON.stringify(checkEventTypes(input.event_types)),
        filters: input.filters ? JSON.stringify(input.filters) : null,
        description: input.description ?? null,
        status: 'enabled',
        notification_emails: JSON.stringify(input.notification_emails ?? []),
        rate_limit_per_minute: input.rate_limit_per_minute ?? DEFAULT_RATE_PER_MINUTE,
        payload_version: 1,
        secret: secrets.seal(verified.secret),
        previous_secret: null,
        previous_secret_expires_at: null,
        verified_at: verified.verifiedAt,
        consecutive_failures: 0,
        last_success_at: null,
        disabled_reason: null,
        created_at: at,
        updated_at: at,
        deleted_at: null,
      };
      await insertWithExternalId((onClash) => subscriptionsRepository.insert(db, row, onClash), 'webhook subscription', input.external_id);
      if (verified.ping) await logPing(db, organisationId, row.id, verified.ping);
      await events.record(db, organisationId, 'webhook_subscription.created', { id: row.id, summary: `Webhook subscription to ${new URL(row.url).host} created.` });
      return { ...toSubscriptionView(row), secret: verified.secret };
    },

    list: (db: Db, organisationId: string, params: ListParams) =>
      listPage(cursors, {
        list: 'webhook_subscriptions',
        organisationId,
        params: { ...params, include_deleted: false },
        fetch: (q) => subscriptionsRepository.page(db, organisationId, q),
        map: toSubscriptionView,
      }),

    get: async (db: Db, organisationId: string, id: string) => toSubscriptionView(await live(db, organisationId, id)),

    /** Before the transaction: a new URL is verified like a new subscription, signed with the current secret. */
    async prepareUpdate(db: Db, organisationId: string, id: string, patch: Static<typeof UpdateWebhookSubscription>): Promise<string | undefined> {
      if (patch.event_types) checkEventTypes(patch.event_types);
      if (patch.url === undefined) return undefined;
      const row = await live(db, organisationId, id);
      if (patch.url === row.url) return undefined;
      return (await verifyEndpoint(patch.url, id, secrets.open(row.secret))).attemptedAt;
    },

    async update(db: Db, organisationId: string, id: string, patch: Static<typeof UpdateWebhookSubscription>, verifiedAt: string | undefined): Promise<View> {
      // One round trip (PostgreSQL, db/final-statement.ts): the change and its event go with the COMMIT; a
      // subscription not changed (absent, deleted, already so, or another has the URL asked) refuses it, so that
      // the request runs again down here (404, 409, or the subscription as it is).
      if (finalStatementOffered() && Object.values(patch).some((value) => value !== undefined)) {
        const changes: SubscriptionChanges = {
          url: patch.url === undefined ? undefined : { url: patch.url, verifiedAt: verifiedAt ?? null },
          event_types: patch.event_types === undefined ? undefined : JSON.stringify(checkEventTypes(patch.event_types)),
          filters: patch.filters === undefined ? undefined : patch.filters === null ? null : JSON.stringify(patch.filters as Filters),
          description: patch.description,
          notification_emails: patch.notification_emails === undefined ? undefined : JSON.stringify(patch.notification_emails),
          rate_limit_per_minute: patch.rate_limit_per_minute,
          status: patch.status,
        };
        return toSubscriptionView(await subscriptionsRepository.updateInOneStatement(db, organisationId, id, changes, nowIso(clock)));
      }
      const row = await live(db, organisationId, id);
      const changes: Partial<SubscriptionRow> = {};
      if (patch.url !== undefined && patch.url !== row.url) {
        if (await subscriptionsRepository.findLiveByUrl(db, organisationId, patch.url)) throw new ApiError('webhook_subscription.url_taken', 'Another subscription of this organisation has that URL.');
        Object.assign(changes, { url: patch.url, verified_at: verifiedAt ?? null });
      }
      if (patch.event_types !== undefined) changes.event_types = JSON.stringify(checkEventTypes(patch.event_types));
      if (patch.filters !== undefined) changes.filters = patch.filters === null ? null : JSON.stringify(patch.filters as Filters);
      if (patch.description !== undefined) changes.description = patch.description;
      if (patch.notification_emails !== undefined) changes.notification_emails = JSON.stringify(patch.notification_emails);
      if (patch.rate_limit_per_minute !== undefined) changes.rate_limit_per_minute = patch.rate_limit_per_minute;
      if (patch.status !== undefined && patch.status !== row.status) {
        // Enabling again clears the failure streak, so one more failure does not disable it at once.
        Object.assign(changes, patch.status === 'enabled' ? { status: 'enabled', disabled_reason: null, consecutive_failures: 0 } : { status: 'disabled', disabled_reason: 'Disabled through the API.' });
      }
      for (const key of Object.keys(changes) as (keyof SubscriptionRow)[]) if (changes[key] === row[key]) delete changes[key];
      if (Object.keys(changes).length === 0) return toSubscriptionView(row);
      changes.updated_at = nowIso(clock);
      await subscriptionsRepository.update(db, organisationId, id, changes);
      await events.record(db, organisationId, 'webhook_subscription.updated', { id, summary: `Webhook subscription changed: ${Object.keys(changes).filter((k) => k !== 'updated_at' && k !== 'verified_at').join(', ')}.` });
      return toSubscriptionView({ ...row, ...changes });
    },

    async remove(db: Db, organisationId: string, id: string): Promise<void> {
      // One round trip (PostgreSQL, db/final-statement.ts): the delete, its tombstone, its pending deliveries
      // abandoned and its event go with the COMMIT; a subscription not live (or whose URL's host SQL cannot write
      // as URL does) refuses it, so that the request runs again down here.
      if (finalStatementOffered()) return subscriptionsRepository.deleteInOneStatement(db, organisationId, id, nowIso(clock), ABANDONED_ON_DELETE);
      const row = await live(db, organisationId, id);
      const at = nowIso(clock);
      await subscriptionsRepository.update(db, organisationId, id, { deleted_at: at, updated_at: at, status: 'disabled', disabled_reason: 'Deleted.' });
      await deliveriesRepository.abandonPendingOf(db, organisationId, id, ABANDONED_ON_DELETE);
      await deletionsRepository.record(db, organisationId, 'webhook_subscription', row, at);
      await events.record(db, organisationId, 'webhook_subscription.deleted', { id, summary: `Webhook subscription to ${new URL(row.url).host} deleted.` });
    },

    /** A new secret; the old one keeps signing, as a second signature, for a grace period. */
    async rotateSecret(db: Db, organisationId: string, id: string) {
      const row = await live(db, organisationId, id);
      const now = clock.now();
      const secret = generateSigningSecret();
      const expires = new Date(now.getTime() + ROTATION_GRACE_MS).toISOString();
      await subscriptionsRepository.update(db, organisationId, id, { secret: secrets.seal(secret), previous_secret: row.secret, previous_secret_expires_at: expires, updated_at: now.toISOString() });
      await events.record(db, organisationId, 'webhook_subscription.secret_rotated', { id, summary: 'Signing secret rotated; the previous one signs too until it expires.' });
      return { secret, previous_secret_expires_at: expires };
    },

    /** Queues a `webhook.test` delivery to this subscription (delivered by the worker, logged like any other). */
    async sendTest(db: Db, organisationId: string, id: string) {
      const row = await live(db, organisationId, id);
      const at = nowIso(clock);
      const eventId = newId();
      const delivery: DeliveryRow = {
        id: newId(),
        organisation_id: organisationId,
        subscription_id: row.id,
        event_id: eventId,
        event_type: 'webhook.test',
        payload: deliveryBody('webhook.test', at, { id: eventId, subscription_id: row.id, summary: 'A test delivery requested through the API.' }),
        status: 'pending',
        attempts: 0,
        first_attempt_at: null,
        next_attempt_at: at,
        leased_until: null,
        last_status_code: null,
        last_error: null,
        delivered_at: null,
        created_at: at,
      };
      await deliveriesRepository.insertMany(db, [delivery]);
      await events.record(db, organisationId, 'webhook_subscription.test_sent', { id: row.id, delivery_id: delivery.id, summary: 'Test delivery queued.' });
      return toDeliveryView(delivery, []);
    },

    async deliveries(db: Db, organisationId: string, id: string, params: { limit?: number; cursor?: string }) {
      await live(db, organisationId, id);
      const page = await listPage(cursors, {
        list: `webhook_subscriptions/${id}/deliveries`,
        organisationId,
        params,
        fetch: (q) => deliveriesRepository.page(db, organisationId, id, { after: q.after?.[0], limit: q.limit }),
        map: (r: DeliveryRow) => r,
      });
      const attempts = await deliveriesRepository.attemptsOf(db, page.data.map((d) => d.id));
      return { ...page, data: page.data.map((d) => toDeliveryView(d, attempts.filter((a) => a.delivery_id === d.id))) };
    },

    /** From the delivery log: the same event (same webhook-id) is delivered again, now. */
    async resend(db: Db, organisationId: string, id: string, deliveryId: string) {
      const row = await live(db, organisationId, id);
      const delivery = await foundOr404(deliveriesRepository.find(db, organisationId, row.id, deliveryId), 'webhook_delivery.not_found', `No delivery ${deliveryId} of this subscription.`);
      if (delivery.status === 'pending') throw new ApiError('webhook_delivery.pending', 'That delivery is still being tried; it needs no resend.');
      const at = nowIso(clock);
      const patch = { status: 'pending' as const, next_attempt_at: at, first_attempt_at: null, attempts: 0, leased_until: null };
      await deliveriesRepository.update(db, delivery.id, patch);
      await events.record(db, organisationId, 'webhook_subscription.delivery_resent', { id: row.id, delivery_id: delivery.id, summary: `Delivery of ${delivery.event_type} queued again.` });
      return toDeliveryView({ ...delivery, ...patch }, await deliveriesRepository.attemptsOf(db, [delivery.id]));
    },
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
