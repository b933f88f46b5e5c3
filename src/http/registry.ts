// Turns operation declarations into Fastify routes: the REST door of the operation pipeline. Nothing here is per
// operation: an operation gets tenancy, auth, entitlement, versioning, validation, idempotency, its transaction
// and its audit entry by being listed. The MCP server's door into the same pipeline is `OperationPipeline`,
// returned here (src/mcp/tool-call.ts).
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Operation, OperationServices } from '../operations/operation.ts';
import type { Idempotency } from './idempotency.ts';
import { createAdmission, operationOf, type Admission } from './pipeline.ts';
import { createOperationRunner, type OperationAnswer, type OperationRunner, type RunOperation } from './operation-runner.ts';
import { toApiError } from './error-handler.ts';
import { StaleTenancy, turnedStale, type TenancyCache } from './tenancy-cache.ts';
import { sendRider, withRider, type Rider } from '../db/riders.ts';
import { attempt, type MaybeAsync } from '../maybe-async.ts';
import { isDatabaseUnavailable } from '../db/availability.ts';
import type { Limit } from './rate-limits.ts';
import type { Revisions } from '../operations/revisions.ts';

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

/** The pipeline every operation's call goes through, for a door other than its REST route. */
export interface OperationPipeline {
  admission: Admission;
  runner: OperationRunner;
  /** Each operation's run, by operation. */
  runs: ReadonlyMap<Operation, RunOperation>;
}

export interface RegistryDeps {
  services: OperationServices;
  idempotency: Idempotency;
  /** Run after authorization, so that limits count per credential. */
  limits: Limit[];
  revisions: Revisions;
  /** PostgreSQL: organisations cached by address, checked with each request's first statement. */
  tenancyCache?: TenancyCache;
  /** PostgreSQL: a write's last statement may go with its COMMIT (src/db/final-statement.ts). */
  finalStatements: boolean;
}

function send(reply: FastifyReply, answer: OperationAnswer): FastifyReply {
  reply.code(answer.status);
  if (answer.replayed) reply.header('Idempotency-Replayed', 'true');
  if (answer.headers) reply.headers(answer.headers);
  if (answer.payload === undefined) return reply.send();
  if (answer.json) reply.type('application/json; charset=utf-8');
  return reply.send(answer.payload);
}

export function registerOperations(app: FastifyInstance, operations: Operation[], deps: RegistryDeps): OperationPipeline {
  const { services, idempotency, limits, revisions } = deps;
  const admission = createAdmission({
    db: app.db,
    tenancyCache: deps.tenancyCache,
    organisations: services.organisations,
    authenticators: [services.apiKeys.authenticator, services.oauthTokens.authenticator],
    limits,
    revisions,
  });
  const runner = createOperationRunner({ db: app.db, finalStatements: deps.finalStatements, services, idempotency, revisions });
  const runs = new Map<Operation, RunOperation>();
  // A write refused with 403 or failed on our side is recorded outside its rolled-back transaction.
  const recordRefusedWrite = async (request: FastifyRequest, _reply: FastifyReply, error: FastifyError) =>
    runner.recordRefusal(operationOf(request), request, error, toApiError(error, request), request.log);

  for (const op of operations) {
    const run = runner.runnerFor(op);
    runs.set(op, run);
    app.route({
      method: op.method,
      url: toFastifyPath(op.path),
      config: { operation: op },
      // The input is validated by the pipeline (operation-runner.ts), not by a route schema: one check for every door.
      onRequest: admission.admitRequest,
      ...(op.writes ? { onError: recordRefusedWrite } : {}),
      // A read on SQLite is answered before this returns (src/maybe-async.ts); Fastify waits for a promise.
      handler: (request: FastifyRequest, reply: FastifyReply) => {
        const answer = runChecked(request, reply, run);
        if (answer instanceof Promise) return answer.then((answered) => send(reply, answered));
        send(reply, answer);
      },
    });
  }
  return { admission, runner, runs };

  /**
   * A request that started from a cached organisation (tenancy-cache.ts) sends that organisation's check with its
   * first statement and is answered only once the check holds; if the organisation changed, the request is
   * admitted again with the organisation as it is now and runs again (its first run's transaction rolled back
   * with the failed check). A refusal (422 validation included) stands only for the organisation as it is now.
   */
  function runChecked(request: FastifyRequest, reply: FastifyReply, run: RunOperation): MaybeAsync<OperationAnswer> {
    const rider = request.tenancyRider;
    return rider === undefined ? run(request) : runCheckedWith(rider, request, reply, run);
  }

  function runCheckedWith(rider: Rider, request: FastifyRequest, reply: FastifyReply, run: RunOperation): MaybeAsync<OperationAnswer> {
    const failed = (err: unknown) => againIfStale(rider, request, reply, run, err);
    // A check that rode with the request's statement has held by the time its answer is here: nothing to wait for.
    const confirmed = (answer: OperationAnswer): MaybeAsync<OperationAnswer> => {
      const settled = () => {
        request.tenancyRider = undefined;
        return answer;
      };
      return rider.held === true ? settled() : sendRider(app.db, rider).then(settled, failed);
    };
    return attempt(() => withRider(rider, () => run(request)), confirmed, failed);
  }

  /** A request refused (or failed) on its cached organisation: run again on the organisation as it is now if that copy has changed; else the refusal stands. */
  async function againIfStale(rider: Rider, request: FastifyRequest, reply: FastifyReply, run: RunOperation, err: unknown): Promise<OperationAnswer> {
    try {
      // A database that is away answers 502 whoever asks: no check to wait for.
      if (isDatabaseUnavailable(err)) throw err;
      const stale = err instanceof StaleTenancy || (await turnedStale(app.db, rider).catch(() => false));
      if (!stale) throw err;
      await admission.readmit(request, reply);
      return run(request);
    } finally {
      request.tenancyRider = undefined;
    }
  }
}
