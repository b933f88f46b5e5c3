// Writing events: services call `record` with the transaction of their change, never after it.
import { sql, type RawBuilder } from 'kysely';
import { type Clock, nowIso } from '../clock.ts';
import type { Db } from '../db/database.ts';
import { newId } from '../ids.ts';
import { skipLockedForUpdate } from '../db/claims.ts';
import { preparedQuery } from '../db/prepared.ts';
import { insertMany } from '../db/many-rows.ts';
import type { EventType } from './catalog.ts';
import { auditChange, targetTypeOfEvent } from '../audit/audit-log.ts';
import { andThen, type MaybeAsync } from '../maybe-async.ts';

/** What a delivery carries (spec: Events 5): identifiers and a short summary; receivers read the rest. */
export interface EventData {
  id: string;
  summary: string;
  [identifier: string]: string | null;
}

// Every write runs this, a bulk request once per operation: compiled once rather than built per call. Nothing
// reads its result, so on PostgreSQL it travels with the transaction's next statement or its COMMIT (prepared.ts).
const insertEvent = preparedQuery(
  (db: Db, id: string, organisationId: string, type: string, occurredAt: string, data: string) =>
    db.insertInto('outbox_events').values({ id, organisation_id: organisationId, type, occurred_at: occurredAt, data, dispatched_at: null }),
  { deferrable: true },
);

/**
 * The event of a row changed by a data-modifying statement (PostgreSQL), made by the database: its type, and its
 * data's members after `id`, in order, each an SQL expression over the changed row `u` written as a JSON string.
 */
export interface RowEvent {
  type: EventType;
  occurredAt: string;
  members: Array<[name: string, value: RawBuilder<unknown>]>;
}

/**
 * PostgreSQL: `INSERT INTO outbox_events … FROM u`, for a `WITH u AS (UPDATE … RETURNING *)` statement that makes
 * a change and its event at once (db/final-statement.ts). The data is the text EventRecorder.record writes,
 * `{"id":…,…}`, byte for byte. `from` is where the members read, `u` (one row per event) or a join of it; `id`
 * the event's id, one made now unless the statement makes many (orderedIds).
 */
export function eventOfChangedRow(organisationId: string, event: RowEvent, from: RawBuilder<unknown> = sql`u`, id: RawBuilder<unknown> = sql`${newId()}::uuid`): RawBuilder<unknown> {
  const data = event.members.reduce((json, [name, value]) => sql`${json} || ${`,${JSON.stringify(name)}:`}::text || to_json((${value})::text)::text`, sql`'{"id":' || to_json(u.id::text)::text`);
  return sql`insert into outbox_events (id, organisation_id, type, occurred_at, data, dispatched_at)
    select ${id}, ${organisationId}::uuid, ${event.type}::text, ${event.occurredAt}::timestamptz, ${data} || '}', null from ${from}`;
}

/**
 * Ids for the many rows one statement makes (the events of the enrolments a delete ends), by `ordinal` (1, 2, …
 * in SQL): UUIDv7s that sort in that order, after every id made before this call and before every id made after
 * it, as ids made one by one with newId would. They are one id's, whose last 40 random bits (ids.ts: after its
 * time and counter) are cut to 36 and counted up from.
 */
export function orderedIds(): (ordinal: RawBuilder<unknown>) => RawBuilder<unknown> {
  const hex = newId().replaceAll('-', '');
  const prefix = hex.slice(0, 22);
  const start = Number(BigInt(`0x${hex.slice(22)}`) & 0xfffffffffn);
  return (ordinal) => sql`(${prefix}::text || lpad(to_hex(${start}::bigint + ${ordinal}), 10, '0'))::uuid`;
}

export function createEventRecorder(deps: { clock: Clock }) {
  return {
    /** At once where the statement answers at once (SQLite, in a transaction: src/maybe-async.ts), else its promise. */
    record(db: Db, organisationId: string, type: EventType, data: EventData): MaybeAsync<unknown> {
      const inserted = insertEvent.now(db, newId(), organisationId, type, nowIso(deps.clock), JSON.stringify(data));
      // A change made by an admin page or a CLI command is audited with its first event (audit/audit-log.ts).
      return andThen(inserted, () => auditChange(db, organisationId, { type: targetTypeOfEvent(type), id: data.id }));
    },
    /**
     * Many events of one organisation in multi-row INSERTs, in the order given (their ids increase in that
     * order): a bulk request's events, written together with its changes.
     */
    async recordMany(db: Db, organisationId: string, events: Array<{ type: EventType; data: EventData }>): Promise<void> {
      if (events.length === 0) return;
      const occurredAt = nowIso(deps.clock);
      const rows = events.map(({ type, data }) => ({ id: newId(), organisation_id: organisationId, type, occurred_at: occurredAt, data: JSON.stringify(data), dispatched_at: null }));
      await insertMany(db, 'outbox_events', rows);
      await auditChange(db, organisationId, { type: targetTypeOfEvent(events[0].type), id: events[0].data.id });
    },
  };
}

export type EventRecorder = ReturnType<typeof createEventRecorder>;

/** Reading the outbox for delivery. */
export const outboxRepository = {
  /** Ids of up to `limit` events not yet fanned out (others' claims skipped). */
  async claimUndispatched(tx: Db, limit: number): Promise<string[]> {
    const query = tx.selectFrom('outbox_events').select('id').where('dispatched_at', 'is', null).orderBy('id').limit(limit);
    return (await skipLockedForUpdate(tx, query).execute()).map((r) => r.id);
  },
  byIds(db: Db, ids: string[]) {
    if (ids.length === 0) return Promise.resolve([]);
    return db.selectFrom('outbox_events').selectAll().where('id', 'in', ids).orderBy('id').execute();
  },
  async markDispatched(db: Db, ids: string[], at: string): Promise<void> {
    if (ids.length > 0) await db.updateTable('outbox_events').set({ dispatched_at: at }).where('id', 'in', ids).execute();
  },
};
