// Fan-out: each outbox event becomes one delivery per matching enabled subscription of its organisation, in
// one transaction with marking the event dispatched — so an event is fanned out exactly once, even with
// several workers (they claim events with SKIP LOCKED on PostgreSQL), and a crash in between loses nothing.
import { type Clock, nowIso } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import { outboxRepository } from '../../events/outbox.ts';
import { newId } from '../../ids.ts';
import { deliveryBody, filtersMatch, typeMatches, type Filters } from './matching.ts';
import { deliveriesRepository, subscriptionsRepository, type DeliveryRow } from './webhooks.repository.ts';

const BATCH = 500;

export function createWebhookDispatcher(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;

  /** One batch; returns how many events it fanned out (0: nothing waiting). */
  return async function dispatchOutbox(): Promise<number> {
    return db.transaction().execute(async (tx) => {
      const ids = await outboxRepository.claimUndispatched(tx, BATCH);
      if (ids.length === 0) return 0;
      const events = await outboxRepository.byIds(tx, ids);
      const subscriptions = await subscriptionsRepository.enabledFor(tx, [...new Set(events.map((e) => e.organisation_id))]);
      const parsed = subscriptions.map((s) => ({ row: s, types: JSON.parse(s.event_types) as string[], filters: (s.filters ? JSON.parse(s.filters) : null) as Filters }));
      const now = nowIso(clock);
      const deliveries: DeliveryRow[] = [];
      for (const event of events) {
        const data = JSON.parse(event.data) as Record<string, unknown>;
        for (const s of parsed) {
          if (s.row.organisation_id !== event.organisation_id || !typeMatches(s.types, event.type) || !filtersMatch(s.filters, data)) continue;
          deliveries.push({
            id: newId(),
            organisation_id: event.organisation_id,
            subscription_id: s.row.id,
            event_id: event.id,
            event_type: event.type,
            payload: deliveryBody(event.type, event.occurred_at, data),
            status: 'pending',
            attempts: 0,
            first_attempt_at: null,
            next_attempt_at: now,
            leased_until: null,
            last_status_code: null,
            last_error: null,
            delivered_at: null,
            created_at: now,
          });
        }
      }
      // Chunks keep each statement under both engines' limits on bound parameters.
      for (let i = 0; i < deliveries.length; i += 200) await deliveriesRepository.insertMany(tx, deliveries.slice(i, i + 200));
      await outboxRepository.markDispatched(tx, ids, now);
      return ids.length;
    });
  };
}
