// Reading the audit log, and the retention job's deletes: the only statement anywhere that removes entries.
// Nothing updates an entry.
import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { AuditEventsTable } from '../../db/audit-tables.ts';

export type AuditEventRow = Selectable<AuditEventsTable>;

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
  findById(db: Db, organisationId: string, id: string): Promise<AuditEventRow | undefined> {
    return db.selectFrom('audit_events').selectAll().where('organisation_id', '=', organisationId).where('id', '=', id).executeTakeFirst();
  },

  /**
   * Newest first, after the cursor's id; one row more than asked. Ids are UUIDv7s of the entries' times, so
   * `since` and `until` also bound the id range read (widened by a second: an id's time may differ from
   * `occurred_at` by a millisecond).
   */
  page(db: Db, organisationId: string, filters: AuditFilters, after: string | undefined, limit: number): Promise<AuditEventRow[]> {
    let query = db.selectFrom('audit_events').selectAll().where('organisation_id', '=', organisationId);
    for (const column of EQUALITY_FILTERS) {
      const value = filters[column];
      if (value !== undefined) query = query.where(column, '=', value as never);
    }
    if (filters.since !== undefined) query = query.where('id', '>=', smallestIdAt(Date.parse(filters.since) - 1000)).where('occurred_at', '>=', filters.since);
    if (filters.until !== undefined) query = query.where('id', '<', smallestIdAt(Date.parse(filters.until) + 1000)).where('occurred_at', '<', filters.until);
    if (after !== undefined) query = query.where('id', '<', after);
    return query.orderBy('id', 'desc').limit(limit + 1).execute();
  },

  /** The names of these people of the organisation, by id. */
  async personNames(db: Db, organisationId: string, ids: string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const rows = await db.selectFrom('people').select(['id', 'name']).where('organisation_id', '=', organisationId).where('id', 'in', ids).execute();
    return new Map(rows.map((r) => [r.id, r.name]));
  },

  /** Deletes up to `limit` entries of one organisation older than `before` (ms since the epoch), by key range. */
  async deleteOlderThan(db: Db, organisationId: string, before: number, limit: number): Promise<number> {
    const oldest = db.selectFrom('audit_events').select('id').where('organisation_id', '=', organisationId).where('id', '<', smallestIdAt(before)).limit(limit);
    const result = await db.deleteFrom('audit_events').where('organisation_id', '=', organisationId).where('id', 'in', oldest).executeTakeFirst();
    return Number(result.numDeletedRows);
  },
};
