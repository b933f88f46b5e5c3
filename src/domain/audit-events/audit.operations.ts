// GET /audit_events and GET /audit_events/{id} (docs/audit-log.md): who did what, with which credential, from
// where. Read-only: no operation changes or deletes an entry.
import { listOperation, readByIdOperation, type ResourceName } from '../../operations/resource-operations.ts';
import { AuditEvent, AuditEventsQuery } from './audit.schemas.ts';

const tag = 'Audit log';
const name: ResourceName = { singular: 'audit log entry', plural: 'audit log entries' };
const access = { scope: 'audit:read', capability: 'audit/view' } as const;

export const auditOperations = [
  listOperation({
    id: 'listAuditEvents',
    collection: 'audit_events',
    name,
    tag,
    summary: 'List audit log entries',
    description:
      'Every change of state in the organisation, whatever made it (REST, MCP, admin pages, the CLI, signing in, OAuth consent), and every write refused with 403, newest first. Entries name field names, never values, and never a secret.',
    ...access,
    query: AuditEventsQuery,
    item: AuditEvent,
    successDescription: 'A page of entries, newest first.',
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
    name,
    read: (ctx, id) => ctx.services.audit.get(ctx.db, ctx.organisation.id, id),
  }),
];
