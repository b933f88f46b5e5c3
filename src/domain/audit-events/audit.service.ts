// The audit log as the API and the admin page read it, and its retention.
import type { Static } from 'typebox';
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import { ApiError } from '../../errors/api-error.ts';
import type { CursorCodec, Page } from '../../operations/pagination.ts';
import { listPage } from '../../operations/listing.ts';
import type { AuditEvent } from './audit.schemas.ts';
import { auditRepository, type AuditEventRow, type AuditFilters } from './audit.repository.ts';

export type AuditEventView = Static<typeof AuditEvent>;

export const DEFAULT_AUDIT_RETENTION_DAYS = 400;
/** Entries removed per statement: a large backlog goes in short transactions that never hold writers up long. */
const RETENTION_BATCH = 1000;

export function toAuditEventView(row: AuditEventRow): AuditEventView {
  return {
    id: row.id,
    occurred_at: row.occurred_at,
    actor: { type: row.actor_type, id: row.actor_id, name: row.actor_name },
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

async function nameActors(db: Db, organisationId: string, views: AuditEventView[]): Promise<void> {
  const unnamed = views.filter((v) => v.actor.type === 'user' && v.actor.name === null && v.actor.id !== null);
  const names = await auditRepository.personNames(db, organisationId, [...new Set(unnamed.map((v) => v.actor.id!))]);
  for (const v of unnamed) v.actor.name = names.get(v.actor.id!) ?? null;
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
    /**
     * A write through the API records its person by id only (looking the name up would cost every write a
     * read): their name is filled in here, as it is now.
     */
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
      await nameActors(db, organisationId, page.data);
      return page;
    },

    async get(db: Db, organisationId: string, id: string): Promise<AuditEventView> {
      const row = await auditRepository.findById(db, organisationId, id);
      if (!row) throw new ApiError('audit_event.not_found', `No audit event ${id} in this organisation.`);
      const view = toAuditEventView(row);
      await nameActors(db, organisationId, [view]);
      return view;
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
