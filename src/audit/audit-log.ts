// Writing the audit log (docs/audit-log.md): who changed what, with which credential, by which path, from where.
// An entry is written in the transaction of the change it records, so a change never commits without it and a
// rolled-back change leaves none. Nothing here or anywhere else updates or deletes an entry; only the retention
// job (audit.repository.ts) removes old ones. No secret and no field value is ever put in an entry: credentials
// are named by their row id, and `changed_fields` holds field names only.
//
// Three ways in:
// - REST and MCP writes: the operation pipeline records each write itself (audit-operations.ts), for every
//   operation, with the operation's id as the action.
// - Admin pages and CLI commands: the entry point opens an audit scope (`withAuditScope`) naming who acts and
//   how; the service that makes the change calls `auditChange` with its transaction (the event recorder does
//   it for every change that emits an event), and the first such call in the scope writes the entry.
// - Sign-in, sign-out and OAuth consent write their entries explicitly with `recordAudit`.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { CompiledQuery } from 'kysely';
import type { Db } from '../db/database.ts';
import type { AuditEventsTable } from '../db/audit-tables.ts';
import { preparedQuery } from '../db/prepared.ts';
import { v7 } from 'uuid';
import { newId } from '../ids.ts';
import { isoTime } from '../clock.ts';
import type { MaybeAsync } from '../maybe-async.ts';

export type AuditVia = AuditEventsTable['via'];
export type AuditOutcome = AuditEventsTable['outcome'];

export interface AuditActor {
  type: AuditEventsTable['actor_type'];
  id: string | null;
  name: string | null;
}

export interface AuditCredential {
  kind: NonNullable<AuditEventsTable['credential_kind']>;
  /** The credential's row id (an API key's, a session's, a client's): never the secret itself. */
  id: string | null;
}

export interface AuditTarget {
  type: string;
  id: string | null;
}

/** Who acts and by which path: the same for every entry one request or command writes. */
export interface AuditSource {
  actor: AuditActor;
  credential: AuditCredential | null;
  via: AuditVia;
  requestId: string | null;
  ip: string | null;
  userAgent: string | null;
}

export interface AuditEntry extends AuditSource {
  organisationId: string;
  /** The operationId, or a page's or a CLI command's name. */
  action: string;
  target: AuditTarget | null;
  outcome: AuditOutcome;
  status: number;
  changedFields: readonly string[];
}

// Every write runs this. Nothing reads its result, so on PostgreSQL it travels with the transaction's next
// statement or its COMMIT (db/prepared.ts): an audited write costs no extra round trip.
const insertEntry = preparedQuery(
  (
    db: Db,
    id: string,
    organisationId: string,
    occurredAt: string,
    actorType: string,
    actorId: string | null,
    actorName: string | null,
    credentialKind: string | null,
    credentialId: string | null,
    via: string,
    action: string,
    targetType: string | null,
    targetId: string | null,
    outcome: string,
    status: number,
    requestId: string | null,
    ip: string | null,
    userAgent: string | null,
    changedFields: string,
  ) =>
    db.insertInto('audit_events').values({
      id,
      organisation_id: organisationId,
      occurred_at: occurredAt,
      actor_type: actorType as AuditActor['type'],
      actor_id: actorId,
      actor_name: actorName,
      credential_kind: credentialKind as AuditCredential['kind'] | null,
      credential_id: credentialId,
      via: via as AuditVia,
      action,
      target_type: targetType,
      target_id: targetId,
      outcome: outcome as AuditOutcome,
      status,
      request_id: requestId,
      ip,
      user_agent: userAgent,
      changed_fields: changedFields,
    }),
  { deferrable: true },
);

const USER_AGENT_MAX = 500;
const NO_FIELDS = '[]';

/**
 * Writes one entry with `db`: the change's transaction for a success, the database for a refusal. The id is a
 * UUIDv7 of the entry's time, so that ids order entries by time (lists, the retention job's id range); an
 * entry written now gets this process's fast one. Not async: in a SQLite transaction the entry is written at once
 * (src/maybe-async.ts), elsewhere the statement's promise is handed back as it is; a failure may be thrown at once.
 */
export function recordAudit(db: Db, entry: AuditEntry, at?: Date): MaybeAsync<unknown> {
  return insertEntry.now(db, ...entryArguments(entry, at));
}

/** The same insert, compiled: for a transaction that sends it with its final statement (db/final-statement.ts). */
export function auditEntryStatement(db: Db, entry: AuditEntry): CompiledQuery {
  return insertEntry.compile(db, ...entryArguments(entry));
}

function entryArguments(entry: AuditEntry, at?: Date): Parameters<typeof insertEntry> extends [Db, ...infer A] ? A : never {
  const { actor, credential, target } = entry;
  const when = at ?? new Date();
  return [
    at === undefined ? newId() : v7({ msecs: at.getTime() }),
    entry.organisationId,
    isoTime(when),
    actor.type,
    actor.id,
    actor.name,
    credential?.kind ?? null,
    credential?.id ?? null,
    entry.via,
    entry.action,
    target?.type ?? null,
    target?.id ?? null,
    entry.outcome,
    entry.status,
    entry.requestId,
    entry.ip,
    entry.userAgent === null || entry.userAgent.length <= USER_AGENT_MAX ? entry.userAgent : entry.userAgent.slice(0, USER_AGENT_MAX),
    entry.changedFields.length === 0 ? NO_FIELDS : JSON.stringify(entry.changedFields),
  ];
}

interface AuditScope {
  source: AuditSource;
  action: string;
  changedFields: readonly string[];
  /** The organisation and target of the entry written in this scope, once written. */
  written?: { organisationId: string; target: AuditTarget | null };
}

const scopes = new AsyncLocalStorage<AuditScope>();

/**
 * Runs `work` (a page action, a CLI command) as `source` doing `action`: the first `auditChange` inside it
 * writes the entry. A refusal (`status` 403) or a failure (5xx) of work that had named its organisation is
 * written by `onError`, outside the rolled-back transaction.
 */
export function withAuditScope<T>(source: AuditSource, action: string, work: () => Promise<T>, changedFields: readonly string[] = []): Promise<T> {
  return scopes.run({ source, action, changedFields }, work);
}

/**
 * Records the change being made in `tx` under the current audit scope, once per scope: the services that
 * change state call it in their transaction. Outside a scope (a REST request, which the pipeline records
 * itself; a background job) it does nothing.
 */
export function auditChange(tx: Db, organisationId: string, target: AuditTarget | null): MaybeAsync<unknown> {
  const scope = scopes.getStore();
  // Synchronous when there is nothing to write: every REST write's event passes here.
  if (scope === undefined || scope.written !== undefined) return undefined;
  scope.written = { organisationId, target };
  return recordAudit(tx, { ...scope.source, organisationId, action: scope.action, target, outcome: 'success', status: 200, changedFields: scope.changedFields });
}

/** Whether a change made now is audited by its service with its first event (an admin page, a CLI command: auditChange). */
export const auditedWithFirstEvent = (): boolean => scopes.getStore() !== undefined;

/** `api_key.created` → `api_key`: the type of the thing an event is about. */
export const targetTypeOfEvent = (eventType: string): string => eventType.slice(0, eventType.indexOf('.'));

/** The outcome a refused or failed request is recorded with, or undefined when it is not recorded (not 403, not 5xx). */
export function unsuccessfulOutcome(status: number): AuditOutcome | undefined {
  if (status === 403) return 'refused';
  return status >= 500 ? 'failed' : undefined;
}
