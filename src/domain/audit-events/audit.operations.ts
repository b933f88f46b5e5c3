// GET /audit_events and GET /audit_events/{id} (docs/audit-log.md): who did what, with which credential, from
// where. Read-only: no operation changes or deletes an entry.
import { defineOperation } from '../../operations/operation.ts';
import { readByIdOperation } from '../../operations/resource-operations.ts';
import { ListEnvelope } from '../../operations/schemas.ts';
import { AuditEvent, AuditEventsQuery } from './audit.schemas.ts';

const tag = 'Audit log';
const access = { scope: 'audit:read', capability: 'audit/view' } as const;

export const auditOperations = [
  defineOperation({
    id: 'listAuditEvents',
    method: 'GET',
    path: '/audit_events',
    tag,
    summary: 'List audit log entries',
    description:
      'Every change of state in the organisation, whatever made it (REST, MCP, admin pages, the CLI, signing in, OAuth consent), and every write refused with 403, newest first. Entries name field names, never values, and never a secret.',
    ...access,
    writes: false,
    query: AuditEventsQuery,
    success: { status: 200, schema: ListEnvelope(AuditEvent), description: 'A page of entries, newest first.' },
    errors: [422],
    handler: (ctx, { query }) => ctx.services.audit.list(ctx.db, ctx.organisation.id, query),
  }),
  readByIdOperation({
    id: 'getAuditEvent',
    collection: 'audit_events',
    tag,
    summary: 'Read an audit log entry',
    ...access,
    notFoundCode: 'audit_event.not_found',
    item: AuditEvent,
    name: { singular: 'audit log entry', plural: 'audit log entries' },
    read: (ctx, id) => ctx.services.audit.get(ctx.db, ctx.organisation.id, id),
  }),
];
