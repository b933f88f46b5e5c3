// The audit entries of the operation pipeline, whichever door a call came in by (a REST request, an MCP tool
// call): operation-runner.ts calls these for every operation that writes, so a new operation is recorded with
// no code of its own.
import type { Db } from '../db/database.ts';
import { isDatabaseUnavailable } from '../db/availability.ts';
import type { ApiError } from '../errors/api-error.ts';
import type { Operation } from '../operations/operation.ts';
import type { OperationCall } from './pipeline.ts';
import { auditEntryStatement, recordAudit, unsuccessfulOutcome, type AuditEntry, type AuditOutcome, type AuditTarget } from '../audit/audit-log.ts';
import type { CompiledQuery } from 'kysely';
import type { MaybeAsync } from '../maybe-async.ts';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/** Where a refused write's entry that could not be written is reported. */
export interface RefusalLog {
  error(obj: object, msg: string): void;
}

/** The top-level field names of a JSON object body: what the request set (its values are never recorded). */
function fieldNamesOf(request: OperationCall): string[] {
  const body = request.body;
  if (!BODY_METHODS.has(request.method) || body === null || typeof body !== 'object' || Array.isArray(body) || Buffer.isBuffer(body)) return [];
  return Object.keys(body);
}

/** The operation's kind of thing: the resource its events name (`section.updated` → `section`), else its collection. */
const targetTypes = new WeakMap<Operation, string>();
function targetTypeOf(op: Operation): string {
  let type = targetTypes.get(op);
  if (type === undefined) {
    const event = op.emits?.[0];
    type = event ? event.slice(0, event.indexOf('.')) : op.path.split('/')[1];
    targetTypes.set(op, type);
  }
  return type;
}

/** What the write acted on: the id of the resource it answered with, else the one its path names. */
function targetOf(op: Operation, request: OperationCall, body: unknown): AuditTarget {
  const answered = body !== null && typeof body === 'object' ? (body as { id?: unknown }).id : undefined;
  const params = request.params as { id?: string; external_id?: string } | undefined;
  const id = typeof answered === 'string' ? answered : (params?.id ?? (params?.external_id === undefined ? null : `ext:${params.external_id}`));
  return { type: targetTypeOf(op), id };
}

function entryOf(op: Operation, request: OperationCall, outcome: AuditOutcome, status: number, target: AuditTarget): AuditEntry {
  const actor = request.actor!;
  return {
    organisationId: actor.organisationId,
    actor: { type: 'user', id: actor.personId, name: null },
    credential: { kind: actor.kind === 'api_key' ? 'api_key' : 'oauth', id: actor.credentialId },
    via: request.via ?? 'rest',
    action: op.id,
    target,
    outcome,
    status,
    requestId: request.id,
    // A tool call's are those of the /mcp request that carried it.
    ip: request.ip,
    userAgent: request.headers['user-agent'] ?? null,
    changedFields: fieldNamesOf(request),
  };
}

/** A write that succeeded, in its own transaction `tx`: committed with it or not at all. */
export function recordWrite(tx: Db, op: Operation, request: OperationCall, response: { status: number; body: unknown }): MaybeAsync<unknown> {
  // A bulk request none of whose operations succeeded (an atomic one that failed, say) rolled its work back
  // and answers 200 with the failures: it changed nothing, so it is no change to record.
  if (op.bulk && (response.body as { summary?: { succeeded?: number } } | undefined)?.summary?.succeeded === 0) return undefined;
  return recordAudit(tx, entryOf(op, request, 'success', response.status, targetOf(op, request, response.body)));
}

/**
 * The entry recordWrite would write for a write that answers its operation's success status about the resource
 * its path names, or about the one it `created` (answered with that id), as a statement to send with the
 * transaction's final one (db/final-statement.ts).
 */
export function successEntryStatement(db: Db, op: Operation, request: OperationCall, created?: string): CompiledQuery {
  return auditEntryStatement(db, entryOf(op, request, 'success', op.success.status, targetOf(op, request, created === undefined ? undefined : { id: created })));
}

/**
 * A known caller refused with 403, or a write that failed on our side, is recorded after its transaction rolled
 * back. A 401 has no actor and is never recorded (the metrics count it), so requests without a credential cannot
 * grow the log; other refusals changed nothing and are not either.
 */
export async function recordRefusedWrite(db: Db, op: Operation, call: OperationCall, error: unknown, refusal: ApiError, log: RefusalLog): Promise<void> {
  if (call.actor === undefined || isDatabaseUnavailable(error)) return;
  const outcome = unsuccessfulOutcome(refusal.status);
  if (outcome === undefined) return;
  try {
    await recordAudit(db, entryOf(op, call, outcome, refusal.status, targetOf(op, call, undefined)));
  } catch (err) {
    log.error({ err }, 'audit entry of a refused write not written');
  }
}
