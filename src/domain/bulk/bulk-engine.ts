// The one bulk engine (spec: Bulk semantics; docs/api-guide.md#bulk-operations-8-and-9). It runs a validated envelope's operations in
// request order inside the request's transaction, which also holds the Idempotency-Key record, so the
// recorded bulk response commits together with the effects:
// - non-atomic: each operation in its own savepoint; a failure undoes that operation alone;
// - atomic: all operations in one savepoint (each in its own inside it, so that a deferred write's failure is
//   its operation's); the first failure undoes all and stops the run.
// Each operation calls the resource's own service function, which writes the operation's event in the same
// savepoint as its effect, so an undone operation leaves no event either.
//
// A resource may also offer a batch (`executors.batch`): the same service functions over what the request's
// operations name, read up front, with their writes queued (batch-writes.ts) instead of made. The engine then
// decides every operation in memory, in request order, each with its own result, and writes what succeeded
// in a few multi-row statements inside one savepoint: the round trips of a request no longer grow with its
// operations. Should a batch statement fail on a constraint (another request wrote meanwhile), the savepoint
// is undone and the operations run again one by one as above, so that the failing one alone reports its code.
import type { Static, TSchema } from 'typebox';
import type { ValidateFunction } from 'ajv';
import type { Db } from '../../db/database.ts';
import { inSavepoint } from '../../db/savepoints.ts';
import { isConstraintViolation } from '../../db/errors.ts';
import { BatchConflict, type BatchWrites } from './batch-writes.ts';
import { ApiError, type FieldError } from '../../errors/api-error.ts';
import { bodyFieldErrors } from '../../operations/field-errors.ts';
import { compileBodyValidator } from '../../operations/validation.ts';
import { MAX_ATOMIC_OPERATIONS, MAX_OPERATIONS, type BulkOpName } from './bulk.schemas.ts';

export interface BulkItem {
  ref: string;
  op: string;
  id?: string;
  external_id?: string;
  data?: Record<string, unknown>;
}

export interface BulkRequestBody {
  operations: BulkItem[];
  atomic?: boolean;
}

export interface BulkResultEntry {
  ref: string;
  status: number;
  data?: unknown;
  /** An upsert that found the record already as asked: nothing was written, no event (status 200). */
  unchanged?: true;
  error?: { code: string; category: string; detail: string };
}

export interface BulkResponseBody {
  summary: { total: number; succeeded: number; failed: number };
  results: BulkResultEntry[];
}

/** What an upsert executor answers; `changed: false` (nothing written) shows as `unchanged: true` in its result. */
export interface UpsertResult {
  created: boolean;
  view: unknown;
  changed?: boolean;
}

/** The record an update or delete names: by id or by the caller's external id, never both. */
export type BulkTarget = { id: string } | { external_id: string };

/** Per op the resource allows: the schema its `data` is validated against (delete has none). */
export interface BulkOpDeclarations {
  create?: { data: TSchema };
  update?: { data: TSchema };
  upsert?: { data: TSchema };
  delete?: Record<string, never>;
}

type DataOf<D> = D extends { data: infer S extends TSchema } ? Static<S> : never;

/**
 * What each allowed op runs: the resource's own service functions, bound to the request. `upsertProbe`
 * (optional) answers an upsert that would write nothing without running it, and so without its savepoint; it
 * must not write, and must answer exactly what `upsert` would, or undefined. `batch` (optional) prepares the
 * batch run (see above): op functions whose writes go to `writes` instead of the database; or undefined, when
 * this request's operations need what only the one-by-one run does (they then run so).
 */
export type BulkExecutors<O extends BulkOpDeclarations> = {
  upsertProbe?: O extends { upsert: { data: infer S extends TSchema } } ? (externalId: string, data: Static<S>) => Promise<UpsertResult | undefined> : never;
  batch?: () => Promise<BulkBatch<O> | undefined>;
} & BulkOpExecutors<O>;

/**
 * A batch run: op functions that read what the request named from memory and queue their writes in `writes`.
 * An op function must fail (throw its `ApiError`) before it queues anything, or leave its queued writes to be
 * undone by the engine; it must answer exactly what the one-by-one path would.
 */
export interface BulkBatch<O extends BulkOpDeclarations> {
  executors: BulkOpExecutors<O>;
  writes: BatchWrites;
}

export type BulkOpExecutors<O extends BulkOpDeclarations> = {
  [K in keyof O & BulkOpName]-?: K extends 'create'
    ? (data: DataOf<O[K]>, externalId: string | undefined) => Promise<unknown>
    : K extends 'update'
      ? (target: BulkTarget, data: DataOf<O[K]>) => Promise<unknown>
      : K extends 'upsert'
        ? (externalId: string, data: DataOf<O[K]>) => Promise<UpsertResult>
        : (target: BulkTarget) => Promise<void>;
};

type AnyExecutors = {
  create?(data: unknown, externalId: string | undefined): Promise<unknown>;
  update?(target: BulkTarget, data: unknown): Promise<unknown>;
  upsert?(externalId: string, data: unknown): Promise<UpsertResult>;
  upsertProbe?(externalId: string, data: unknown): Promise<UpsertResult | undefined>;
  delete?(target: BulkTarget): Promise<void>;
  batch?(): Promise<{ executors: AnyExecutors; writes: BatchWrites } | undefined>;
};

/** An operation refused before it ran, or failed while running: what its result reports. */
class OperationFailure {
  readonly error: ApiError;
  /** Prepended to the error's field pointers: where in the request body they point from. */
  readonly base: string;
  constructor(error: ApiError, base: string) {
    this.error = error;
    this.base = base;
  }
}

const invalid = (path: string, code: string, detail: string) => new OperationFailure(new ApiError('validation.invalid_body', detail, { errors: [{ path, code, detail }] }), '');

/** The problem's detail, naming every field it is about by its pointer into the request body. */
function detailOf(failure: OperationFailure): string {
  const errors: FieldError[] | undefined = failure.error.errors;
  if (!errors || errors.length === 0) return failure.error.detail;
  return errors.map((e) => `${failure.base}${e.path}: ${e.detail}`).join(' ');
}

function failed(ref: string, failure: OperationFailure): BulkResultEntry {
  const { error } = failure;
  return { ref, status: error.status, error: { code: error.code, category: error.category, detail: detailOf(failure) } };
}

function succeeded(ref: string, status: number, data?: unknown): BulkResultEntry {
  return data === undefined ? { ref, status } : { ref, status, data };
}

/**
 * What runs an operation; `probe`, when there is one, first looks whether the operation has nothing to write
 * (its result then, without a savepoint: there is nothing to undo) or must run (undefined).
 */
type Step = OperationFailure | ((() => Promise<BulkResultEntry>) & { probe?: () => Promise<BulkResultEntry | undefined> });

export function createBulkEngine(declarations: BulkOpDeclarations) {
  // Compiled once per resource, with the same rules (strict types, defaults) as the single operations' bodies.
  const validators = new Map<string, ValidateFunction>();
  for (const [op, declaration] of Object.entries(declarations)) {
    if (declaration && 'data' in declaration) validators.set(op, compileBodyValidator(declaration.data as object));
  }

  /** The envelope rules the route's schema cannot express; a violation is a 422 (or 413) and nothing runs. */
  function checkEnvelope(body: BulkRequestBody): void {
    const seen = new Map<string, number>();
    const duplicates: FieldError[] = [];
    body.operations.forEach((item, i) => {
      const first = seen.get(item.ref);
      if (first === undefined) seen.set(item.ref, i);
      else duplicates.push({ path: `/operations/${i}/ref`, code: 'duplicate', detail: `\`ref\` ${JSON.stringify(item.ref)} is already used by operation ${first}; each operation needs its own.` });
    });
    if (duplicates.length > 0) throw new ApiError('validation.invalid_body', 'Two operations share a `ref`; see `errors`.', { errors: duplicates });
    // spec: Limits — 500 operations per request, 100 when atomic. docs/api-guide.md#bulk-operations-8-and-9: 413, nothing executed.
    const limit = body.atomic ? MAX_ATOMIC_OPERATIONS : MAX_OPERATIONS;
    if (body.operations.length > limit) {
      throw new ApiError(
        'bulk.too_many_operations',
        `This request has ${body.operations.length} operations; at most ${limit} are allowed${body.atomic ? ' in an atomic request' : ''}. Split it; nothing was run.`,
      );
    }
  }

  /** `data` checked against the op's schema, as a single request's body would be. */
  function validData(item: BulkItem, i: number): OperationFailure | undefined {
    const at = `/operations/${i}/data`;
    if (item.data === undefined) return invalid(at, 'required', `\`${item.op}\` needs \`data\`.`);
    const validate = validators.get(item.op)!;
    if (validate(item.data)) return undefined;
    const errors = bodyFieldErrors(validate.errors as never);
    return new OperationFailure(new ApiError('validation.invalid_body', 'The operation’s data is invalid.', { errors }), at);
  }

  /** What `id`/`external_id` name, per the op's rules (see bulk.schemas.ts). */
  function target(item: BulkItem, i: number): BulkTarget | OperationFailure {
    if (item.id !== undefined && item.external_id !== undefined) {
      return invalid(`/operations/${i}/external_id`, 'conflict', `\`${item.op}\` takes \`id\` or \`external_id\`, not both.`);
    }
    if (item.id !== undefined) return { id: item.id };
    if (item.external_id !== undefined) return { external_id: item.external_id };
    return invalid(`/operations/${i}/id`, 'required', `\`${item.op}\` needs \`id\` or \`external_id\` to name the record.`);
  }

  /** Everything about an operation that needs no database; what is left is the call to run it. */
  function prepare(item: BulkItem, i: number, run: AnyExecutors): Step {
    const { ref } = item;
    switch (item.op as BulkOpName) {
      case 'create': {
        if (item.id !== undefined) return invalid(`/operations/${i}/id`, 'not_allowed', '`create` takes no `id`: the service assigns it.');
        const bad = validData(item, i);
        if (bad) return bad;
        const inData = item.data!.external_id;
        if (item.external_id !== undefined && inData !== undefined && inData !== null && inData !== item.external_id) {
          return invalid(`/operations/${i}/external_id`, 'conflict', '`external_id` differs from `data.external_id`; give it once.');
        }
        return async () => succeeded(ref, 201, await run.create!(item.data, item.external_id));
      }
      case 'update': {
        const t = target(item, i);
        if (t instanceof OperationFailure) return t;
        const bad = validData(item, i);
        if (bad) return bad;
        return async () => succeeded(ref, 200, await run.update!(t, item.data));
      }
      case 'upsert': {
        if (item.id !== undefined) return invalid(`/operations/${i}/id`, 'not_allowed', '`upsert` names its record by `external_id`, not `id`.');
        if (item.external_id === undefined) return invalid(`/operations/${i}/external_id`, 'required', '`upsert` needs `external_id`.');
        const bad = validData(item, i);
        if (bad) return bad;
        const externalId = item.external_id;
        const outcome = ({ created, view, changed }: UpsertResult) => {
          const result = succeeded(ref, created ? 201 : 200, view);
          if (changed === false) result.unchanged = true;
          return result;
        };
        const probe = run.upsertProbe;
        return Object.assign(async () => outcome(await run.upsert!(externalId, item.data)), {
          probe: probe && (async () => {
            const found = await probe(externalId, item.data);
            return found && outcome(found);
          }),
        });
      }
      case 'delete': {
        const t = target(item, i);
        if (t instanceof OperationFailure) return t;
        if (item.data !== undefined) return invalid(`/operations/${i}/data`, 'not_allowed', '`delete` takes no `data`.');
        return async () => {
          await run.delete!(t);
          return succeeded(ref, 204);
        };
      }
    }
  }

  /** Only errors the API knows become an operation's result; anything else is a bug and fails the request (500). */
  function asFailure(err: unknown, i: number): OperationFailure {
    if (err instanceof ApiError) return new OperationFailure(err, `/operations/${i}/data`);
    throw err;
  }

  // spec: Bulk semantics 1-2 — each operation on its own; a failure affects no other.
  async function runEach(db: Db, items: BulkItem[], run: AnyExecutors): Promise<BulkResultEntry[]> {
    const results: BulkResultEntry[] = [];
    for (const [i, item] of items.entries()) {
      const step = prepare(item, i, run);
      if (step instanceof OperationFailure) {
        results.push(failed(item.ref, step));
        continue;
      }
      try {
        results.push((await step.probe?.()) ?? (await inSavepoint(db, 'bulk_operation', step)));
      } catch (err) {
        results.push(failed(item.ref, asFailure(err, i)));
      }
    }
    return results;
  }

  /**
   * The batch run (see the top of this file): the results, or undefined when a batch statement failed on a
   * constraint or a row changed under it, and nothing of the batch was kept.
   */
  async function runBatched(db: Db, items: BulkItem[], atomic: boolean, batch: { executors: AnyExecutors; writes: BatchWrites }): Promise<BulkResultEntry[] | undefined> {
    const { executors, writes } = batch;
    const results: BulkResultEntry[] = [];
    for (const [i, item] of items.entries()) {
      const step = prepare(item, i, executors);
      let failure: OperationFailure;
      if (step instanceof OperationFailure) failure = step;
      else {
        const mark = writes.mark();
        try {
          results.push(await step());
          continue;
        } catch (err) {
          writes.undo(mark);
          failure = asFailure(err, i);
        }
      }
      // Nothing was written yet: an atomic request that fails here has nothing to undo.
      if (atomic) return rolledBack(items, i, failed(item.ref, failure));
      results.push(failed(item.ref, failure));
    }
    if (writes.empty) return results;
    try {
      await inSavepoint(db, 'bulk_batch', () => writes.flush(db));
    } catch (err) {
      if (err instanceof BatchConflict || isConstraintViolation(err)) return undefined;
      throw err;
    }
    return results;
  }

  /** An atomic request's results when operation `index` failed with `entry`: every other one 409 bulk.rolled_back. */
  function rolledBack(items: BulkItem[], index: number, entry: BulkResultEntry): BulkResultEntry[] {
    const culprit = JSON.stringify(entry.ref);
    return items.map((item, i) => {
      if (i === index) return entry;
      const detail = i < index ? `Undone: operation ${culprit} failed, and the atomic request was rolled back.` : `Not run: operation ${culprit} failed first, and the atomic request was rolled back.`;
      const rolledBack = new ApiError('bulk.rolled_back', detail);
      return { ref: item.ref, status: rolledBack.status, error: { code: rolledBack.code, category: rolledBack.category, detail } };
    });
  }

  // spec: Bulk semantics 3 — one transaction; the first failure fails all. docs/api-guide.md#bulk-operations-8-and-9: the failing operation
  // reports its own error, every other one 409 bulk.rolled_back; later operations do not run.
  async function runAtomically(db: Db, items: BulkItem[], run: AnyExecutors): Promise<BulkResultEntry[]> {
    const results: BulkResultEntry[] = [];
    let failure: { index: number; entry: BulkResultEntry } | undefined;
    const stop = new Error('atomic bulk: roll back');
    try {
      await inSavepoint(db, 'bulk_atomic', async () => {
        for (const [i, item] of items.entries()) {
          const step = prepare(item, i, run);
          try {
            if (step instanceof OperationFailure) throw step;
            // Each in a savepoint of its own too: a deferred write of this operation (db/deferred-writes.ts: an
            // INSERT whose external id may be taken) is sent before its release, so that its failure is this
            // operation's, not the next one's or the COMMIT's.
            results.push(await inSavepoint(db, 'bulk_operation', step));
          } catch (err) {
            failure = { index: i, entry: failed(item.ref, err instanceof OperationFailure ? err : asFailure(err, i)) };
            throw stop;
          }
        }
      });
    } catch (err) {
      if (err !== stop) throw err;
    }
    return failure ? rolledBack(items, failure.index, failure.entry) : results;
  }

  return {
    /**
     * Runs the operations of a validated envelope in `db`, the request's transaction. `returnMinimal`
     * (`Prefer: return=minimal`): each success's `data` is cut to the record's id; the rest is as without it.
     */
    async run(db: Db, body: BulkRequestBody, executors: object, options: { returnMinimal?: boolean } = {}): Promise<BulkResponseBody> {
      checkEnvelope(body);
      const run = executors as AnyExecutors;
      const atomic = body.atomic === true;
      const batch = run.batch ? await run.batch() : undefined;
      const batched = batch ? await runBatched(db, body.operations, atomic, batch) : undefined;
      const results = batched ?? (atomic ? await runAtomically(db, body.operations, run) : await runEach(db, body.operations, run));
      if (options.returnMinimal) for (const result of results) if (result.data !== undefined) result.data = { id: (result.data as { id: string }).id };
      const ok = results.filter((r) => r.status < 300).length;
      return { summary: { total: results.length, succeeded: ok, failed: results.length - ok }, results };
    },
  };
}
