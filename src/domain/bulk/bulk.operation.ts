// A resource gets its bulk endpoint (`POST /<collection>/bulk`, spec operations 8 and 9) by declaring which
// ops it allows, the schema each op's `data` follows (the same ones its single operations take) and the
// service function each op calls. Validation, limits, savepoints, atomicity and results are the engine's.
import type { TSchema } from 'typebox';
import type { EventType } from '../../events/catalog.ts';
import { defineOperation, type Operation, type OperationContext } from '../../operations/operation.ts';
import type { ResourceOperationSpec } from '../../operations/resource-operations.ts';
import { createBulkEngine, type BulkExecutors, type BulkItem, type BulkOpDeclarations, type BulkRequestBody } from './bulk-engine.ts';
import { namedAfter } from '../../operations/schemas.ts';
import { BulkMinimalResponse, BulkRequest, BulkResponse, MAX_ATOMIC_OPERATIONS, MAX_OPERATIONS, type BulkOpName } from './bulk.schemas.ts';

/** The endpoint is `POST /<collection>/bulk`. */
export interface BulkOperationSpec<O extends BulkOpDeclarations> extends ResourceOperationSpec {
  /** The resource schema: each successful operation's `data`. */
  item: TSchema;
  /** The resource's events; each successful operation writes one. */
  emits: EventType[];
  /** The ops allowed, each with the schema its `data` is validated against (delete: `{}`). */
  operations: O;
  /**
   * One operation, the request body's example. One only: the registry-driven events suite expects exactly
   * one event per successful request.
   */
  example: BulkItem;
  /**
   * Per request: the resource's service functions for each op, bound to the request's transaction. The
   * validated envelope comes along, for resources that read what its operations name in one go.
   */
  executors(ctx: OperationContext, body: BulkRequestBody): BulkExecutors<O>;
}

export function bulkOperation<O extends BulkOpDeclarations>(spec: BulkOperationSpec<O>): Operation {
  const engine = createBulkEngine(spec.operations);
  const ops = Object.keys(spec.operations) as BulkOpName[];
  const dataSchemas = Object.fromEntries(Object.entries(spec.operations).flatMap(([op, d]) => (d && 'data' in d ? [[op, d.data]] : [])));
  return defineOperation({
    id: spec.id,
    method: 'POST',
    path: `/${spec.collection}/bulk`,
    tag: spec.tag,
    summary: spec.summary,
    description: [
      spec.description,
      `Up to ${MAX_OPERATIONS} operations (\`op\`: ${ops.map((o) => `\`${o}\``).join(', ')}), run in request order. ` +
        'Without `atomic`, each operation runs on its own and reports its own outcome; a failed one changes nothing and the others are unaffected. ' +
        `With \`atomic: true\` (at most ${MAX_ATOMIC_OPERATIONS}), the first failure undoes every operation. ` +
        'The response is 200 whenever the envelope is valid, with one result per operation; check each result’s `status`. ' +
        'A malformed envelope (missing `operations`, an unknown `op`, a duplicate `ref`) is a 422 and too many operations a 413 `bulk.too_many_operations`: nothing runs. ' +
        'The Idempotency-Key is required: a retry returns the recorded response, and the record commits with the effects.',
    ]
      .filter(Boolean)
      .join('\n\n'),
    scope: spec.scope,
    capability: spec.capability,
    writes: true,
    idempotency: 'required',
    emits: spec.emits,
    body: namedAfter(spec.item, 'BulkRequest', BulkRequest(ops, dataSchemas)),
    bodyExample: { operations: [spec.example] },
    success: { status: 200, schema: BulkResponse(spec.item), description: 'One result per operation, in request order, and a summary.' },
    // A sync that only counts outcomes (examples/roster-sync.ts) need not have every record written, recorded and sent back.
    minimal: {
      schema: BulkMinimalResponse(spec.item),
      description: 'each successful result’s `data` holds only the record’s `id` (`{ "id": "…" }`); `ref`, `status`, `unchanged`, `error` and `summary` are as without it.',
    },
    errors: [409, 413, 422],
    errorCodes: ['bulk.too_many_operations'],
    bulk: { collection: spec.collection, ops },
    handler: (ctx, { body }) => engine.run(ctx.db, body as BulkRequestBody, spec.executors(ctx, body as BulkRequestBody), { returnMinimal: ctx.returnMinimal }),
  });
}
