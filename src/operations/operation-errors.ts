// Which error codes each operation can answer with. Most follow from the declaration itself (a write can meet
// the plan's entitlement, a body can be malformed, an Idempotency-Key can be reused, a path id can name
// nothing); the rest — the conflicts of a resource's states, a 404 for another thing the path names — only
// the service knows, and the declaration lists them in `errorCodes`. The OpenAPI document's examples, the
// error pages' "returned by" lists and the contract check over every response of the test suite (a problem
// whose code its operation does not list fails it) all read this one function.
import { errorCatalog, type ErrorCode } from '../errors/error-catalog.ts';
import type { Operation } from './operation.ts';

/** Codes any operation can answer with: unreadable requests, authentication, limits, the revision header, a failure of ours or of the database. */
export const everyOperationCodes = [
  'request.malformed',
  'request.too_large',
  'tenancy.unknown_organisation',
  'auth.missing_credential',
  'auth.invalid_credential',
  'auth.expired_credential',
  'auth.revoked_credential',
  'versioning.invalid_revision',
  'rate_limit.exceeded',
  'rate_limit.concurrency',
  'internal.error',
  'database.unavailable',
] as const satisfies readonly ErrorCode[];

/** The codes `op` can answer with as a problem document, in catalog order. */
export function errorCodesOf(op: Operation): ErrorCode[] {
  const codes = new Set<ErrorCode>(everyOperationCodes);
  if (op.scope !== null) codes.add('auth.insufficient_scope');
  if (op.capability !== null) codes.add('auth.missing_capability');
  if (op.writes) codes.add('commerce.plan_entitlement');
  if (op.idempotency) {
    codes.add('idempotency.key_invalid');
    codes.add('idempotency.key_reused');
    codes.add('idempotency.in_progress');
    if (op.idempotency === 'required') codes.add('idempotency.key_required');
  }
  // Any request but a GET may carry a body, whether the operation takes one or not; it is read (and refused
  // when it is empty though said to be JSON, not JSON, not `application/json`, too deep, too large, or holds
  // a `__proto__` key) before the operation looks at it.
  if (op.body || op.method !== 'GET') {
    for (const code of ['request.malformed_json', 'request.body_required', 'request.unsupported_media_type', 'request.too_deep', 'request.body_too_large', 'validation.invalid_body'] as const) {
      codes.add(code);
    }
  }
  // Query parameters are validated; so is a path value an upsert (PUT) would create, and a NUL character is
  // refused in any path value (docs/conventions.md#errors), where the value is named rather than not found.
  if (op.query || op.params) codes.add('validation.invalid_parameter');
  if (op.params) {
    // A path value that cannot be an id of ours names nothing (docs/conventions.md#addresses-and-requests): the operation's 404.
    if (op.method !== 'PUT') codes.add(op.notFoundCode ?? 'request.route_not_found');
  }
  if (op.notFoundCode && op.errors.includes(404)) codes.add(op.notFoundCode);
  for (const code of op.errorCodes ?? []) codes.add(code);
  const order = Object.keys(errorCatalog);
  return [...codes].sort((a, b) => order.indexOf(a) - order.indexOf(b));
}

/** The codes of `op` answered with `status`. */
export function errorCodesWithStatus(op: Operation, status: number): ErrorCode[] {
  return errorCodesOf(op).filter((code) => errorCatalog[code].status === status);
}

/** The statuses of a per-operation result inside a bulk response that carry an `error` (docs/api-guide.md#bulk-operations-8-and-9). */
const resultStatuses = new Set([404, 409, 422]);

/**
 * The codes a bulk operation reports inside its results' `error` (not as a problem document): what the
 * resource's single operations it runs (`create`, `update`, `upsert`, `delete`) can refuse, and
 * `bulk.rolled_back` for the operations an atomic request undid.
 */
export function bulkResultCodesOf(op: Operation, operations: readonly Operation[]): ErrorCode[] {
  if (!op.bulk) return [];
  const collection = `/${op.bulk.collection}`;
  const single: Record<string, (o: Operation) => boolean> = {
    create: (o) => o.method === 'POST' && o.path === collection,
    update: (o) => o.method === 'PATCH' && o.path === `${collection}/{id}`,
    upsert: (o) => o.method === 'PUT' && o.path === `${collection}/ext:{external_id}`,
    delete: (o) => o.method === 'DELETE' && o.path === `${collection}/{id}`,
  };
  const codes = new Set<ErrorCode>(['bulk.rolled_back', 'validation.invalid_body']);
  for (const name of op.bulk.ops) {
    const target = operations.find((o) => single[name]?.(o));
    if (!target) continue;
    // `update` and `delete` name their page by `id` or `external_id`: either may name nothing.
    if (target.notFoundCode && (name === 'update' || name === 'delete')) codes.add(target.notFoundCode);
    for (const code of target.errorCodes ?? []) if (resultStatuses.has(errorCatalog[code].status)) codes.add(code);
  }
  const order = Object.keys(errorCatalog);
  return [...codes].sort((a, b) => order.indexOf(a) - order.indexOf(b));
}
