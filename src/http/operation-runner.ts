// What an operation's call runs once it is admitted (pipeline.ts), the same for every door: the request
// brought to the current revision's shape, its input validated (422 before anything is done), the handler in
// the write's transaction with its idempotency record and its audit entry, and the answer serialised through
// the success schema and taken back to the caller's revision (response-payload.ts). A REST route sends the
// answer (registry.ts); an MCP tool call turns it into a tool result (src/mcp/tool-call.ts).
import type { Db } from '../db/database.ts';
import type { ApiError } from '../errors/api-error.ts';
import { createInputCheck } from '../operations/input-validation.ts';
import type { Operation, OperationContext, OperationServices } from '../operations/operation.ts';
import { Outcome } from '../operations/operation.ts';
import { FIRST_REVISION, type Revisions } from '../operations/revisions.ts';
import { fingerprintOf, type Idempotency } from './idempotency.ts';
import type { OperationCall } from './pipeline.ts';
import { createPayloadWriter, type Payload } from './response-payload.ts';
import { recordRefusedWrite, recordWrite, successEntryStatement, type RefusalLog } from './write-audit.ts';
import { FinalStatementRefused, offerFinalStatement, type FinalStatementOffer } from '../db/final-statement.ts';
import { againIfPlansOutdated } from '../db/outdated-plans.ts';
import { MINIMAL_RETURN_APPLIED, prefersMinimalReturn } from './prefer.ts';
import { andThen, asPromise, type MaybeAsync } from '../maybe-async.ts';
import { inTransaction } from '../db/in-transaction.ts';

/** An operation's answer, before any transport: the status, its headers, its body as it goes out. */
export interface OperationAnswer extends Payload {
  status: number;
  /** Headers the handler answered with (a file's Content-Type). */
  headers: Record<string, string> | undefined;
  /** Answered from the idempotency record of an earlier call with the same key. */
  replayed: boolean;
}

/** What a handler is given of the request, and what its `prepare` step (if any) made before the transaction. */
interface WriteInput {
  params: unknown;
  query: unknown;
  body: unknown;
  prepared?: unknown;
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

export interface RunnerDeps {
  db: Db;
  /** The database can send a write's final statement with its COMMIT (PostgreSQL; db/final-statement.ts). */
  finalStatements: boolean;
  services: OperationServices;
  idempotency: Idempotency;
  revisions: Revisions;
}

/** A read's answer comes at once when nothing it reads waits (src/maybe-async.ts); a write's is a promise. */
export type RunOperation = (call: OperationCall) => MaybeAsync<OperationAnswer>;

export interface OperationRunner {
  /** The call of `op`, admitted, run to its answer. Refusals and failures are thrown. */
  runnerFor(op: Operation): RunOperation;
  /** A write refused with 403 or failed on our side is recorded outside its rolled-back transaction. */
  recordRefusal(op: Operation, call: OperationCall, error: unknown, refusal: ApiError, log: RefusalLog): Promise<void>;
}

export function createOperationRunner(deps: RunnerDeps): OperationRunner {
  const { db, services, idempotency, revisions } = deps;

  /**
   * A PATCH or DELETE of the resource its path names, or a POST to a collection (a create), without an
   * Idempotency-Key, may end in one round trip: its service's last statement goes with its audit entry and the
   * COMMIT (db/final-statement.ts), where the service can say in SQL why it must not commit. Refused there, it
   * runs again on its full path. The resource is named by its id, or by its key (a role); a create's is the
   * one its final statement makes (runFinalStatement's `created`). A service that does not ask
   * (finalStatementOffered) takes its full path as before.
   */
  const mayFinishInOneStatement = (op: Operation) =>
    deps.finalStatements && !op.bulk && (((op.method === 'PATCH' || op.method === 'DELETE') && /\/\{(id|key)\}$/.test(op.path)) || (op.method === 'POST' && /^\/\w+$/.test(op.path)));

  function runnerFor(op: Operation): RunOperation {
    const oneStatement = mayFinishInOneStatement(op);
    const checkInput = createInputCheck(op);
    const payloads = createPayloadWriter(op, revisions);
    // Only operations some revision change touches pay for looking their changes up.
    const upgrades = revisions.changesSince(FIRST_REVISION, op.id).some((c) => c.upgradeRequest);

    /** The answer as it goes out: serialised for the caller's revision, with the headers its preference earns. */
    function answer(call: OperationCall, response: ResponseData, minimal: boolean, replayed: boolean, payload?: Payload): OperationAnswer {
      const written = payload ? payloads.forRevision(payload, response.status, call.revision!) : payloads.write(response.status, response.body, call.revision!, minimal);
      // Said on a replay too: the record's fingerprint holds the preference, so its body is the minimal one.
      const headers = minimal && response.status < 300 ? { ...response.headers, 'Preference-Applied': MINIMAL_RETURN_APPLIED } : response.headers;
      return { status: response.status, headers, replayed, ...written };
    }

    return function run(call) {
      // Callers on an earlier revision: the request is brought to the current shape before validation.
      if (upgrades && call.body !== undefined) {
        for (const change of revisions.changesSince(call.revision!, op.id)) if (change.upgradeRequest) call.body = change.upgradeRequest(call.body);
      }
      checkInput(call);
      // RFC 7240: honoured by the operations that declare a minimal answer, ignored (as the RFC asks) by the rest.
      const minimal = op.minimal !== undefined && prefersMinimalReturn(call.headers.prefer);
      const base: Omit<OperationContext, 'db'> = { organisation: call.organisation!, actor: call.actor!, services, revision: call.revision!, requestId: call.id, returnMinimal: minimal };
      const input: WriteInput = { params: call.params, query: call.query, body: call.body };
      if (!op.writes) {
        // A plain read on a shared connection runs again by itself (db/shared-connections.ts); one in a
        // transaction here. On SQLite it answers at once: no layer of it waits (src/maybe-async.ts).
        const read = againIfPlansOutdated(() => andThen(op.handler({ ...base, db }, input as never), (result) => toResponse(op, result)));
        return andThen(read, (response) => answer(call, response, minimal, false));
      }
      return runWrite(call, base, input, minimal);
    };

    /** Not async: a write without an Idempotency-Key is handed on as its transaction answers (keyedWrite waits in steps). */
    function runWrite(call: OperationCall, base: Omit<OperationContext, 'db'>, input: WriteInput, minimal: boolean): Promise<OperationAnswer> {
      const prepare = op.prepare && (op.prepares?.(input as never) ?? true) ? async () => void (input.prepared = await op.prepare!({ ...base, db }, input as never)) : undefined;
      // At once where every statement answers at once (SQLite: the group runs the body without awaiting it).
      const execute = (tx: Db, finished?: FinalStatementOffer): MaybeAsync<ResponseData> =>
        andThen(op.handler({ ...base, db: tx }, input as never), (result) => {
          const response = toResponse(op, result);
          // Every write's audit entry commits in its transaction, with its events and idempotency record (with the
          // final statement's COMMIT, if one went: successEntryStatement is this entry).
          return finished?.used ? response : andThen(recordWrite(tx, op, call, response), () => response);
        });
      if (call.idempotencyKey !== undefined) return keyedWrite(call, base, minimal, execute, prepare);
      // ARCHITECTURE rule 5 — a write, its events and its idempotency record commit together. A transaction
      // refused for a statement a migration outdated runs again (db/outdated-plans.ts: a rolling upgrade).
      const transact = () => againIfPlansOutdated(() => (oneStatement ? runOfferingFinal(op, call, execute) : inTransaction(db, execute)));
      return asPromise(() => (prepare ? prepare().then(transact) : transact())).then((response) => answer(call, response, minimal, false));
    }

    async function keyedWrite(
      call: OperationCall,
      base: Omit<OperationContext, 'db'>,
      minimal: boolean,
      execute: (tx: Db) => MaybeAsync<ResponseData>,
      prepare: (() => Promise<void>) | undefined,
    ): Promise<OperationAnswer> {
      const scope = { organisationId: base.organisation.id, credentialId: base.actor.credentialId, key: call.idempotencyKey! };
      // The answer is serialised once, in the transaction: the same text is the record and what is sent.
      const executeAndSerialise = async (tx: Db) => {
        const done = await execute(tx);
        const serialised = payloads.serialise(done.status, done.body, minimal);
        return serialised.json ? { ...done, text: serialised.payload as string } : done;
      };
      // A minimal answer is another answer: the preference is fingerprinted, so that a retry under the key gets
      // the shape it asked for or a 409, and a replay of a minimal request is the recorded minimal body.
      const fingerprint = fingerprintOf(call.method, call.url, call.body, { returnMinimal: minimal });
      const recorded = await idempotency.run(scope, fingerprint, executeAndSerialise, prepare);
      return answer(call, recorded, minimal, recorded.replayed, recorded.text !== undefined ? { payload: recorded.text, json: true } : undefined);
    }
  }

  function runOfferingFinal(op: Operation, call: OperationCall, execute: (tx: Db, finished?: FinalStatementOffer) => MaybeAsync<ResponseData>): Promise<ResponseData> {
    return offerFinalStatement((created) => [successEntryStatement(db, op, call, created)], (offer) => inTransaction(db, (tx) => execute(tx, offer))).catch((err: unknown) => {
      if (!(err instanceof FinalStatementRefused)) throw err;
      return inTransaction(db, execute);
    });
  }

  return {
    runnerFor,
    recordRefusal: (op, call, error, refusal, log) => recordRefusedWrite(db, op, call, error, refusal, log),
  };
}
