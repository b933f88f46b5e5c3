// Who acts, as the audit log names them, at each entry point that is not the operation pipeline: a signed-in
// person on a page, and an operator running the `atrium` command.
import os from 'node:os';
import type { FastifyRequest, RouteOptions } from 'fastify';
import type { Db } from '../db/database.ts';
import { recordAudit, unsuccessfulOutcome, withAuditScope, type AuditSource } from './audit-log.ts';

/** The signed-in person of a page request, through their session. */
export function pageSource(request: FastifyRequest, via: AuditSource['via']): AuditSource {
  const person = request.signedIn;
  return {
    actor: { type: 'user', id: person?.personId ?? null, name: person?.name ?? null },
    credential: person ? { kind: 'session', id: person.sessionId } : null,
    via,
    requestId: request.id,
    ip: request.ip,
    userAgent: request.headers['user-agent'] ?? null,
  };
}

/** A page's action name: its method and route, e.g. `POST /admin/integrations/api-keys/:id/revoke`. */
export const pageAction = (request: FastifyRequest): string => `${request.method} ${request.routeOptions.url}`;

// Form fields that are the form's machinery, not something the person changed.
const FORM_MACHINERY = new Set(['_csrf']);

function formFieldNames(body: unknown): string[] {
  if (body === null || typeof body !== 'object') return [];
  return Object.keys(body).filter((name) => !FORM_MACHINERY.has(name));
}

/**
 * Makes every action of an admin page (a POST route with `adminPage` config) an audit scope: the change its
 * services make is recorded in their transaction as done by the signed-in person (audit-log.ts).
 */
export function auditAdminActions(route: RouteOptions): void {
  if (route.method !== 'POST' || !route.config?.adminPage) return;
  const handler = route.handler;
  route.handler = function auditedPageAction(this: unknown, request, reply) {
    return withAuditScope(pageSource(request, 'admin'), pageAction(request), async () => handler.call(this as never, request, reply), formFieldNames(request.body));
  };
}

/** A page action refused with 403 (no capability, no valid form token) or failed on our side, for a signed-in person. */
export async function recordPageRefusal(db: Db, request: FastifyRequest, status: number): Promise<void> {
  const outcome = unsuccessfulOutcome(status);
  if (outcome === undefined || request.method !== 'POST' || !request.signedIn || !request.organisation) return;
  try {
    await recordAudit(db, { ...pageSource(request, 'admin'), organisationId: request.organisation.id, action: pageAction(request), target: null, outcome, status, changedFields: formFieldNames(request.body) });
  } catch (err) {
    request.log.error({ err }, 'audit entry of a refused page action not written');
  }
}

/** The operator running an `atrium` command: the system, under the local account that ran it. */
export function cliSource(): AuditSource {
  let account: string | null = null;
  try {
    account = os.userInfo().username;
  } catch {
    // No passwd entry for this uid (some containers): the entry names no account.
  }
  return { actor: { type: 'system', id: null, name: account }, credential: { kind: 'cli', id: null }, via: 'cli', requestId: null, ip: null, userAgent: null };
}

/** The option names an invocation gave (`--scopes a,b` → `scopes`), never their values. */
export function optionNames(argv: readonly string[]): string[] {
  const names = argv.filter((a) => a.startsWith('--')).map((a) => a.slice(2).split('=')[0]);
  return [...new Set(names.filter((n) => n !== 'json' && n !== 'help'))];
}
