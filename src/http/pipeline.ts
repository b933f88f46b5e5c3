// The shared steps every operation runs before its handler, in this order (each may end the request):
//   tenancy (404) → authentication (401) → authorization: scope, capability (403) → plan entitlement (412)
//   → rate and concurrency limits (429) → revision (422) → Idempotency-Key header (422).
// Body validation (422) and the handler come after (operation-runner.ts), so a caller without a valid
// credential learns nothing about the body it sent. A REST request runs them as one onRequest hook (a hook of
// its own per step cost a promise and Fastify's hook iteration each, on every request); an MCP tool call runs
// the same functions from authorization on, its door (/mcp) having read the organisation and authenticated the
// credential for that very HTTP request (src/mcp/tool-call.ts). Each step returns at once when it has nothing to
// wait for (src/maybe-async.ts): on SQLite, with the API key's check cached, a request is admitted within the
// hook's call, and Fastify goes on without a promise.
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Actor, Authenticator } from '../access/actor.ts';
import type { Organisation } from '../domain/organisations/organisations.repository.ts';
import type { OrganisationService } from '../domain/organisations/organisations.service.ts';
import { ApiError } from '../errors/api-error.ts';
import { parseIdempotencyKey } from './idempotency.ts';
import type { Operation } from '../operations/operation.ts';
import type { Limit } from './rate-limits.ts';
import { FIRST_REVISION, type Revisions } from '../operations/revisions.ts';
import type { Db } from '../db/database.ts';
import type { Rider } from '../db/riders.ts';
import { isDatabaseUnavailable } from '../db/availability.ts';
import { turnedStale, type TenancyCache } from './tenancy-cache.ts';
import { andThen, type MaybeAsync } from '../maybe-async.ts';

declare module 'fastify' {
  interface FastifyRequest {
    organisation?: Organisation;
    actor?: Actor;
    revision?: string;
    idempotencyKey?: string;
    /**
     * Set while the request runs on a cached organisation not yet checked against the database
     * (tenancy-cache.ts): the check, which goes with the request's first statement.
     */
    tenancyRider?: Rider;
  }
}

/**
 * One call of an operation, whichever door it came in by: what the pipeline reads of it and what its steps
 * record on it. A REST request's FastifyRequest is one as it stands; an MCP tool call builds one from its
 * arguments (src/mcp/tool-call.ts).
 */
export interface OperationCall {
  /** The request id: the HTTP request's, for a tool call that of the /mcp request carrying it. */
  readonly id: string;
  readonly method: string;
  /** Path and query under /api/v1, as the idempotency fingerprint hashes them. */
  readonly url: string;
  readonly ip: string;
  /** `service-version`, `idempotency-key` and `user-agent` are read. */
  readonly headers: IncomingHttpHeaders;
  params: unknown;
  query: unknown;
  body: unknown;
  /** Set for a call that came through the MCP server (the audit entry's `via`); absent for REST. */
  readonly via?: 'mcp';
  organisation?: Organisation;
  actor?: Actor;
  revision?: string;
  idempotencyKey?: string;
}

/**
 * The HTTP exchange that carries a call, for the steps that act on it: the limits count per credential on it and
 * free a concurrency slot when it closes, and the headers they and the revision step answer with go on its reply.
 */
export interface Exchange {
  request: FastifyRequest;
  reply: FastifyReply;
  /**
   * The limits have counted this exchange already: a tool call run again on its organisation as it is now
   * (src/mcp/mcp-routes.ts, after its cached copy turned out stale) is not counted twice.
   */
  limitsCounted?: boolean;
}

const BEARER = /^Bearer +([\x21-\x7e]+) *$/i;
const REALM = 'Bearer realm="atrium"';

export function operationOf(request: FastifyRequest): Operation {
  return request.routeOptions.config.operation!;
}

/**
 * The request's one tenancy read: the organisation, its plan and its credentials epoch as they are now. With a
 * cache (tenancy-cache.ts), a known address starts from the cached copy and reads it with its first statement.
 */
function createTenancyStep(organisations: OrganisationService, cache?: TenancyCache) {
  return function resolveTenant(request: FastifyRequest): MaybeAsync<void> {
    const address = request.hostname.toLowerCase();
    const cached = cache?.get(address);
    if (cached) {
      request.organisation = cached;
      request.tenancyRider = cache!.riderFor(address, cached);
      return;
    }
    return andThen(organisations.findByAddress(address), (org) => {
      if (!org) throw new ApiError('tenancy.unknown_organisation', `No organisation is served at ${request.hostname}.`);
      cache?.set(address, org);
      request.organisation = org;
    });
  };
}

/** The tenancy step as an `onRequest` hook of its own, for routes outside the pipeline (the documentation's). */
export function createTenancyHook(organisations: OrganisationService, cache?: TenancyCache) {
  const resolveTenant = createTenancyStep(organisations, cache);
  return async (request: FastifyRequest): Promise<void> => resolveTenant(request);
}

function unauthenticated(err: ApiError, challenge: string): ApiError {
  return new ApiError(err.code, err.detail, { headers: { 'WWW-Authenticate': challenge } });
}

function createAuthenticationStep(authenticators: Authenticator[]) {
  return function authenticate(request: FastifyRequest): MaybeAsync<void> {
    const header = request.headers.authorization;
    if (header === undefined || header === '') {
      throw new ApiError('auth.missing_credential', 'Send `Authorization: Bearer <API key or access token>`.', { headers: { 'WWW-Authenticate': REALM } });
    }
    const token = BEARER.exec(header)?.[1];
    const authenticator = token === undefined ? undefined : authenticators.find((a) => a.accepts(token));
    const invalid = `${REALM}, error="invalid_token"`;
    if (token === undefined || authenticator === undefined) {
      throw new ApiError('auth.invalid_credential', 'The Authorization header is not a bearer credential this service issued.', { headers: { 'WWW-Authenticate': invalid } });
    }
    const challenged = (err: unknown) => (err instanceof ApiError && err.status === 401 ? unauthenticated(err, invalid) : err);
    let actor: MaybeAsync<Actor>;
    try {
      actor = authenticator.authenticate(token, request.organisation!.id, request.organisation!.credentials_epoch);
    } catch (err) {
      throw challenged(err);
    }
    if (actor instanceof Promise) {
      return actor.then(
        (found) => void (request.actor = found),
        (err: unknown) => {
          throw challenged(err);
        },
      );
    }
    request.actor = actor;
  };
}

function authorize(call: OperationCall, op: Operation): void {
  const actor = call.actor!;
  if (op.scope !== null && !actor.scopes.has(op.scope)) {
    throw new ApiError('auth.insufficient_scope', `This operation needs the scope \`${op.scope}\`, which the credential was not granted.`, {
      headers: { 'WWW-Authenticate': `${REALM}, error="insufficient_scope", scope="${op.scope}"` },
    });
  }
  if (op.capability !== null && !actor.capabilities.has(op.capability)) {
    throw new ApiError('auth.missing_capability', `This operation needs the capability \`${op.capability}\`, which you do not have in this organisation.`);
  }
  // spec: What the service does 6 — without the API entitlement, writes are refused and reads stay available.
  if (op.writes && call.organisation!.plan === 'no-api') {
    throw new ApiError('commerce.plan_entitlement', "This organisation's plan does not include API writes; reads stay available for export.");
  }
}

/** The revision a `Service-Version` header asks for, or the 422 (docs/conventions.md#revisions). */
export function requestedRevision(revisions: Revisions, header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  const revision = typeof header === 'string' ? revisions.resolve(header) : undefined;
  if (revision === undefined) {
    throw new ApiError('versioning.invalid_revision', `Header \`Service-Version\` must be a date (YYYY-MM-DD) on or after the first revision, ${FIRST_REVISION}.`);
  }
  return revision;
}

/** spec: Versioning 2-4 — the header wins, else the credential's pinned revision; the applied one is echoed. */
function applyRevision(revisions: Revisions, call: OperationCall, reply: FastifyReply): void {
  const revision = requestedRevision(revisions, call.headers['service-version']) ?? call.actor?.pinnedRevision ?? revisions.current;
  call.revision = revision;
  reply.header('Service-Version', revision);
}

/** Checked with the other headers, before the body is validated (docs/conventions.md#idempotency: refused requests record nothing). */
function readIdempotencyKey(call: OperationCall, op: Operation): void {
  if (op.idempotency) call.idempotencyKey = parseIdempotencyKey(call.headers['idempotency-key'], op.idempotency);
}

export interface AdmissionDeps {
  organisations: OrganisationService;
  /** Organisations by address, checked with each request's first statement (PostgreSQL: saves a round trip). */
  tenancyCache?: TenancyCache;
  /** Where a request's tenancy check goes when nothing else took it. */
  db: Db;
  authenticators: Authenticator[];
  /** Rate and concurrency limits (rate-limits.ts), synchronous where they can be. */
  limits: Limit[];
  revisions: Revisions;
}

export interface Admission {
  /**
   * The REST door's onRequest hook: every step, in order. It calls `done` when it admitted the request at once,
   * and returns the admission's promise otherwise (Fastify takes either).
   */
  admitRequest(request: FastifyRequest, reply: FastifyReply, done: () => void): Promise<void> | undefined;
  /** The steps after tenancy and authentication, for a call whose organisation and actor are already set. */
  admitCaller(call: OperationCall, op: Operation, exchange: Exchange): MaybeAsync<void>;
  /**
   * The steps that depend on the organisation, again, for a request that started from a cached copy that has
   * changed since (tenancy-cache.ts): limits are not counted twice. Throws the refusal the fresh one earns.
   */
  readmit(request: FastifyRequest, reply: FastifyReply): Promise<void>;
}

export function createAdmission(deps: AdmissionDeps): Admission {
  const resolveTenant = createTenancyStep(deps.organisations, deps.tenancyCache);
  const authenticate = createAuthenticationStep(deps.authenticators);
  const { limits, revisions, db } = deps;

  function admitCaller(call: OperationCall, op: Operation, exchange: Exchange): MaybeAsync<void> {
    authorize(call, op);
    if (!exchange.limitsCounted) {
      exchange.limitsCounted = true;
      const waiting = countLimits(exchange, 0);
      if (waiting) return waiting.then(() => afterLimits(call, op, exchange.reply));
    }
    afterLimits(call, op, exchange.reply);
  }

  /** The limits from the `from`-th on, in order; once one has to wait (Redis), the rest are counted after it. */
  function countLimits(exchange: Exchange, from: number): Promise<void> | undefined {
    for (let i = from; i < limits.length; i++) {
      const pending = limits[i]!(exchange.request, exchange.reply);
      if (pending) return pending.then(() => countLimits(exchange, i + 1));
    }
    return undefined;
  }

  function afterLimits(call: OperationCall, op: Operation, reply: FastifyReply): void {
    applyRevision(revisions, call, reply);
    readIdempotencyKey(call, op);
  }

  async function readmit(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    request.tenancyRider = undefined;
    // The full path: the organisation as it is now, read by itself (and cached again).
    const address = request.hostname.toLowerCase();
    const fresh = await deps.organisations.findByAddress(address);
    if (fresh === undefined) throw new ApiError('tenancy.unknown_organisation', `No organisation is served at ${request.hostname}.`);
    deps.tenancyCache?.set(address, fresh);
    request.organisation = fresh;
    await authenticate(request);
    const op = operationOf(request);
    authorize(request, op);
    applyRevision(revisions, request, reply);
    readIdempotencyKey(request, op);
  }

  /**
   * A refusal decided from a cached organisation is checked now, with a statement of its own, before it is
   * answered: if the organisation changed, the request is admitted again with the organisation as it is (whose
   * refusal is thrown). False when the refusal stands.
   */
  async function settleTenancy(request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
    const rider = request.tenancyRider;
    if (rider === undefined) return false;
    if (!(await turnedStale(db, rider))) {
      request.tenancyRider = undefined;
      return false;
    }
    await readmit(request, reply);
    return true;
  }

  /** Authentication and the steps after it; a refusal is settled against the organisation as it is now. */
  function admitTenant(request: FastifyRequest, reply: FastifyReply): MaybeAsync<void> {
    let admitted: MaybeAsync<void>;
    try {
      admitted = andThen(authenticate(request), () => admitCaller(request, operationOf(request), { request, reply }));
    } catch (err) {
      return refused(request, reply, err);
    }
    return admitted instanceof Promise ? admitted.catch((err: unknown) => refused(request, reply, err)) : admitted;
  }

  /** Throws `err`, unless it was decided from a cached organisation that has changed since (settleTenancy). */
  function refused(request: FastifyRequest, reply: FastifyReply, err: unknown): Promise<void> {
    // A database that is away answers 502 whoever asks.
    if (request.tenancyRider === undefined || isDatabaseUnavailable(err)) throw err;
    return settleTenancy(request, reply).then((readmitted) => {
      if (!readmitted) throw err;
    });
  }

  return {
    admitRequest(request, reply, done) {
      const admitted = andThen(resolveTenant(request), () => admitTenant(request, reply));
      if (admitted instanceof Promise) return admitted;
      done();
      return undefined;
    },
    admitCaller,
    readmit,
  };
}
