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
    organisations: services.organisations,
    authenticators: [services.apiKeys.authenticator, services.oauthTokens.authenticator],
    limits,
    revisions,
  });
  const runner = createOperationRunner({ db: app.db, services, idempotency, revisions });
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
      handler: async (request: FastifyRequest, reply: FastifyReply) => send(reply, await run(request)),
    });
  }
  return { admission, runner, runs };
}
