// Turns operation declarations into Fastify routes with the shared hooks. Nothing here is per operation:
// an operation gets tenancy, auth, entitlement, versioning, idempotency and its transaction by being listed.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/database.ts';
import { createWriteRefusalRecorder, recordWrite } from './write-audit.ts';
import { fingerprintOf, type Idempotency } from './idempotency.ts';
import type { Operation, OperationContext, OperationServices } from '../operations/operation.ts';
import { Outcome } from '../operations/operation.ts';
import { createAdmission } from './pipeline.ts';
import { StaleTenancy, type TenancyCache } from './tenancy-cache.ts';
import { sendRider, withRider } from '../db/riders.ts';
import { isDatabaseUnavailable } from '../db/availability.ts';
import type { Limit } from './rate-limits.ts';
import { FIRST_REVISION, type Revisions } from '../operations/revisions.ts';

export const API_PREFIX = '/api/v1';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The declaration a route was generated from; the shared hooks read it. */
    operation?: Operation;
  }
}

/** `/sections/{id}` → `/sections/:id`; a literal colon (as in `ext:{external_id}`) is escaped as `::`. */
export function toFastifyPath(path: string): string {
  return API_PREFIX + path.replace(/:/g, '::').replace(/\{([^}]+)\}/g, ':$1');
}

interface ResponseData {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

function toResponse(op: Operation, result: unknown): ResponseData {
  if (result instanceof Outcome) return { status: result.status, body: result.body, headers: result.headers };
  return { status: op.success.status, body: op.success.status === 204 ? undefined : result };
}

/**
 * Callers on an earlier revision: the request is brought to the current shape before validation, and a
 * success response taken back to their shape after serialisation (so the allow-list still applies first).
 * Only operations some change touches get these hooks.
 */
function revisionTransforms(revisions: Revisions, op: Operation) {
  return {
    preValidation: async (request: FastifyRequest) => {
      for (const change of revisions.changesSince(request.revision!, op.id)) {
        if (change.upgradeRequest && request.body !== undefined) request.body = change.upgradeRequest(request.body);
      }
    },
    onSend: async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      const changes = reply.statusCode < 300 && typeof payload === 'string' && payload !== '' ? revisions.changesSince(request.revision!, op.id) : [];
      if (!changes.some((c) => c.downgradeResponse)) return payload;
      let body = JSON.parse(payload as string);
      for (const change of changes.reverse()) if (change.downgradeResponse) body = change.downgradeResponse(body);
      return JSON.stringify(body);
    },
  };
}

export interface RegistryDeps {
  services: OperationServices;
  idempotency: Idempotency;
  /** Run after authorization, so that limits count per credential. */
  limits: Limit[];
  revisions: Revisions;
  /** PostgreSQL: organisations cached by address, checked with each request's first statement. */
  tenancyCache?: TenancyCache;
}

export function registerOperations(app: FastifyInstance, operations: Operation[], deps: RegistryDeps): void {
  const { services, idempotency, limits, revisions } = deps;
  const { admit, readmit, settleTenancy } = createAdmission({
    db: app.db,
    tenancyCache: deps.tenancyCache,
    organisations: services.organisations,
    handedOverTenancy: services.mcpDispatch.tenancy,
    authenticators: [services.apiKeys.authenticator, services.oauthTokens.authenticator, services.mcpDispatch.authenticator],
    limits,
    revisions,
  });
  const recordRefusedWrite = createWriteRefusalRecorder(app.db);

  for (const op of operations) {
    const successSchema = op.success.schema;
    app.route({
      method: op.method,
      url: toFastifyPath(op.path),
      config: { operation: op },
      schema: {
        ...(op.params ? { params: op.params } : {}),
        ...(op.query ? { querystring: op.query } : {}),
        ...(op.body ? { body: op.body } : {}),
        ...(successSchema ? { response: Object.fromEntries([op.success.status, ...(op.success.alsoStatuses ?? [])].map((s) => [s, successSchema])) } : {}),
      },
      onRequest: admit,
      // Validation refusals reach the handler, which checks a cached organisation before answering them.
      attachValidation: true,
      // A write refused with 403 or failed on our side is recorded outside its rolled-back transaction.
      ...(op.writes ? { onError: recordRefusedWrite } : {}),
      ...(revisions.changesSince(FIRST_REVISION, op.id).length > 0 ? revisionTransforms(revisions, op) : {}),
      handler: async (request: FastifyRequest, reply: FastifyReply) => {
        // Schema validation refused the request: the refusal stands for the organisation as it is now.
        if (request.validationError) {
          await settleTenancy(request, reply);
          throw request.validationError;
        }
        const rider = request.tenancyRider;
        let response: ResponseData;
        if (rider === undefined) {
          response = await answer(op, request, reply);
        } else {
          // On a cached organisation: its check goes with the first statement, and holds before any answer.
          try {
            response = await withRider(rider, () => answer(op, request, reply));
            await sendRider(app.db, rider);
          } catch (err) {
            // A database that is away answers 502 whoever asks: no check to wait for.
            if (isDatabaseUnavailable(err)) throw err;
            const stale = err instanceof StaleTenancy ? err : await sendRider(app.db, rider).then(() => undefined, (e: unknown) => (e instanceof StaleTenancy ? e : undefined));
            if (stale === undefined) throw err;
            await readmit(request, reply, stale);
            response = await answer(op, request, reply);
          }
          request.tenancyRider = undefined;
        }
        reply.code(response.status);
        if (response.headers) reply.headers(response.headers);
        return response.body === undefined ? reply.send() : reply.send(response.body);
      },
    });
  }

  async function answer(op: Operation, request: FastifyRequest, reply: FastifyReply): Promise<ResponseData> {
    const base: Omit<OperationContext, 'db'> = {
      organisation: request.organisation!,
      actor: request.actor!,
      services,
      revision: request.revision!,
      requestId: request.id,
    };
    const input: { params: unknown; query: unknown; body: unknown; prepared?: unknown } = { params: request.params, query: request.query, body: request.body };
    const prepare = op.prepare && (async () => void (input.prepared = await op.prepare!({ ...base, db: app.db }, input as never)));
    const run = async (db: Db) => toResponse(op, await op.handler({ ...base, db }, input as never));
    // Every write's audit entry commits in its transaction, with its events and idempotency record.
    const execute = op.writes
      ? async (tx: Db) => {
          const response = await run(tx);
          await recordWrite(tx, op, request, response);
          return response;
        }
      : run;
    if (!op.writes) return execute(app.db);
    if (request.idempotencyKey !== undefined) {
      const scope = { organisationId: base.organisation.id, credentialId: base.actor.credentialId, key: request.idempotencyKey };
      const recorded = await idempotency.run(scope, fingerprintOf(request.method, request.url, request.body), execute, prepare);
      if (recorded.replayed) reply.header('Idempotency-Replayed', 'true');
      return recorded;
    }
    // ARCHITECTURE rule 5 — a write, its events and its idempotency record commit together.
    await prepare?.();
    return app.db.transaction().execute(execute);
  }
}
