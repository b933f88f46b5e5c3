// The audit log as the API and the admin page read it, and its retention.
import type { Static } from 'typebox';
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import { ApiError } from '../../errors/api-error.ts';
import type { CursorCodec, Page } from '../../operations/pagination.ts';
import { listPage } from '../../operations/listing.ts';
import type { AuditEvent } from './audit.schemas.ts';
import { auditRepository, type AuditEventRow, type AuditFilters, type NamedAuditEventRow } from './audit.repository.ts';

export type AuditEventView = Static<typeof AuditEvent>;

export const DEFAULT_AUDIT_RETENTION_DAYS = 400;
/** Entries removed per statement: a large backlog goes in short transactions that never hold writers up long. */
const RETENTION_BATCH = 1000;

/**
 * A write through the API records its person by id only (looking the name up would cost every write a read):
 * their name, as it is now, comes with the entry when it is read (`person_name`).
 */
export function toAuditEventView(row: AuditEventRow | NamedAuditEventRow): AuditEventView {
  return {
    id: row.id,
    occurred_at: row.occurred_at,
    actor: { type: row.actor_type, id: row.actor_id, name: row.actor_name ?? ('person_name' in row ? row.person_name : null) },
    credential: row.credential_kind === null ? null : { kind: row.credential_kind, id: row.credential_id },
    via: row.via,
    action: row.action,
    target: row.target_type === null ? null : { type: row.target_type, id: row.target_id },
    outcome: row.outcome,
    status: row.status,
    request_id: row.request_id,
    ip: row.ip,
    user_agent: row.user_agent,
    changed_fields: JSON.parse(row.changed_fields) as string[],
  };
}

export interface AuditListParams extends AuditFilters {
  limit?: number;
  cursor?: string;
}

/** Normalised to the stored form (UTC with milliseconds), so that text comparison on SQLite orders times right. */
const utc = (time: string | undefined) => (time === undefined ? undefined : new Date(time).toISOString());

export function createAuditService(deps: { db: Db; clock: Clock; cursors: CursorCodec; retentionDays?: number }) {
  const { cursors, clock } = deps;
  return {
    async list(db: Db, organisationId: string, params: AuditListParams): Promise<Page<AuditEventView>> {
      const { limit, cursor, ...given } = params;
      const filters: AuditFilters = { ...given, since: utc(given.since), until: utc(given.until) };
      const page = await listPage(cursors, {
        list: 'audit_events',
        organisationId,
        params: { limit, cursor },
        filters: filters as Record<string, string | undefined>,
        fetch: (q) => auditRepository.page(db, organisationId, filters, q.after?.[0], q.limit),
        map: toAuditEventView,
      });
      return page;
    },

    async get(db: Db, organisationId: string, id: string): Promise<AuditEventView> {
      const row = await auditRepository.findById(db, organisationId, id);
      if (!row) throw new ApiError('audit_event.not_found', `No audit event ${id} in this organisation.`);
      return toAuditEventView(row);
    },

    /** One pass of the retention job: removes entries older than the retention period, a batch at a time. */
    async purgeExpired(signal?: AbortSignal): Promise<number> {
      const days = deps.retentionDays ?? DEFAULT_AUDIT_RETENTION_DAYS;
      const before = clock.now().getTime() - days * 86_400_000;
      let removed = 0;
      // Organisation by organisation: the key is (organisation_id, id), so each delete is a range of it.
      for (const { id } of await deps.db.selectFrom('organisations').select('id').execute()) {
        for (;;) {
          const n = await auditRepository.deleteOlderThan(deps.db, id, before, RETENTION_BATCH);
          removed += n;
          if (n < RETENTION_BATCH || signal?.aborted) break;
        }
        if (signal?.aborted) break;
      }
      return removed;
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
