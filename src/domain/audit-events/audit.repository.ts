// Reading the audit log, and the retention job's deletes: the only statement anywhere that removes entries.
// Nothing updates an entry.
import { sql, type Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import { isPostgres } from '../../db/column-types.ts';
import type { AuditEventsTable } from '../../db/audit-tables.ts';

export type AuditEventRow = Selectable<AuditEventsTable>;
/** An entry as read for the API: with its person's name as it is now, when the entry was written without one. */
export type NamedAuditEventRow = AuditEventRow & { person_name: string | null };

/**
 * The name of the entry's person, read in the entry's own statement (a second query, by the page's ids, would be
 * a second round trip). `actor_id` is text (it may name a client); a user's is a person's id, a uuid on PostgreSQL.
 */
function withPersonName(db: Db) {
  const person = isPostgres(db)
    ? sql`case when audit_events.actor_type = 'user' and audit_events.actor_name is null then audit_events.actor_id::uuid end`
    : sql`case when audit_events.actor_type = 'user' and audit_events.actor_name is null then audit_events.actor_id end`;
  return sql<string | null>`(select p.name from people p where p.organisation_id = audit_events.organisation_id and p.id = ${person})`.as('person_name');
}

export interface AuditFilters {
  actor_id?: string;
  target_type?: string;
  target_id?: string;
  action?: string;
  outcome?: string;
  since?: string;
  until?: string;
}

/** The smallest UUIDv7 of a millisecond (ms since the epoch): every id below it was made before. */
function smallestIdAt(ms: number): string {
  const hex = Math.max(0, ms).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7000-8000-000000000000`;
}

const EQUALITY_FILTERS = ['actor_id', 'target_type', 'target_id', 'action', 'outcome'] as const;

export const auditRepository = {
  findById(db: Db, organisationId: string, id: string): Promise<NamedAuditEventRow | undefined> {
    return db.selectFrom('audit_events').selectAll().select(withPersonName(db)).where('organisation_id', '=', organisationId).where('id', '=', id).executeTakeFirst();
  },

  /**
   * Newest first, after the cursor's id; one row more than asked. Ids are UUIDv7s of the entries' times, so
   * `since` and `until` also bound the id range read (widened by a second: an id's time may differ from
   * `occurred_at` by a millisecond).
   */
  page(db: Db, organisationId: string, filters: AuditFilters, after: string | undefined, limit: number): Promise<NamedAuditEventRow[]> {
    let query = db.selectFrom('audit_events').selectAll().select(withPersonName(db)).where('organisation_id', '=', organisationId);
    for (const column of EQUALITY_FILTERS) {
      const value = filters[column];
      if (value !== undefined) query = query.where(column, '=', value as never);
    }
    if (filters.since !== undefined) query = query.where('id', '>=', smallestIdAt(Date.parse(filters.since) - 1000)).where('occurred_at', '>=', filters.since);
    if (filters.until !== undefined) query = query.where('id', '<', smallestIdAt(Date.parse(filters.until) + 1000)).where('occurred_at', '<', filters.until);
    if (after !== undefined) query = query.where('id', '<', after);
    return query.orderBy('id', 'desc').limit(limit + 1).execute();
  },

  /** Deletes up to `limit` entries of one organisation older than `before` (ms since the epoch), by key range. */
  async deleteOlderThan(db: Db, organisationId: string, before: number, limit: number): Promise<number> {
    const oldest = db.selectFrom('audit_events').select('id').where('organisation_id', '=', organisationId).where('id', '<', smallestIdAt(before)).limit(limit);
    const result = await db.deleteFrom('audit_events').where('organisation_id', '=', organisationId).where('id', 'in', oldest).executeTakeFirst();
    return Number(result.numDeletedRows);
  },
};
