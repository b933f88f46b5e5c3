// Reading the audit log, and the retention job's deletes: the only statement anywhere that removes entries.
// Nothing updates an entry.
import type { Selectable } from 'kysely';
import type { Db } from '../db/database.ts';
import type { AuditEventsTable } from '../db/audit-tables.ts';

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

const EQUALITY_FILTERS = ['actor_id', 'target_type', 'target_id', 'action', 'outcome'] as const;

export const auditRepository = {
  findById(db: Db, organisationId: string, id: string): Promise<AuditEventRow | undefined> {
    return db.selectFrom('audit_events').selectAll().where('organisation_id', '=', organisationId).where('id', '=', id).executeTakeFirst();
  },

  /** Newest first (ids are UUIDv7, in order of time), after the cursor's id; one row more than asked. */
  page(db: Db, organisationId: string, filters: AuditFilters, after: string | undefined, limit: number): Promise<AuditEventRow[]> {
    let query = db.selectFrom('audit_events').selectAll().where('organisation_id', '=', organisationId);
    for (const column of EQUALITY_FILTERS) {
      const value = filters[column];
      if (value !== undefined) query = query.where(column, '=', value as never);
    }
    if (filters.since !== undefined) query = query.where('occurred_at', '>=', filters.since);
    if (filters.until !== undefined) query = query.where('occurred_at', '<', filters.until);
    if (after !== undefined) query = query.where('id', '<', after);
    return query.orderBy('id', 'desc').limit(limit + 1).execute();
  },

  /** The names of these people of the organisation, by id. */
  async personNames(db: Db, organisationId: string, ids: string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const rows = await db.selectFrom('people').select(['id', 'name']).where('organisation_id', '=', organisationId).where('id', 'in', ids).execute();
    return new Map(rows.map((r) => [r.id, r.name]));
  },

  /** Deletes up to `limit` entries older than `before`; how many it deleted. */
  async deleteOlderThan(db: Db, before: string, limit: number): Promise<number> {
    const oldest = db.selectFrom('audit_events').select('id').where('occurred_at', '<', before).limit(limit);
    const result = await db.deleteFrom('audit_events').where('id', 'in', oldest).executeTakeFirst();
    return Number(result.numDeletedRows);
  },
};
