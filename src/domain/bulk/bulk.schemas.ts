// spec: Bulk operation (request item), Bulk response, Limits. The envelope is validated by the route like
// any body (a malformed one is a 422 and nothing runs); each item's `data` is validated by the bulk engine
// against the resource's own create or update schema, so that one bad item fails alone.
import Type, { type TSchema } from 'typebox';
import { exampleOf } from '../../operations/example-values.ts';
import { ExternalId, named, namedAfter, Uuid } from '../../operations/schemas.ts';

// spec: Limits — operations per bulk request, and per atomic bulk request.
export const MAX_OPERATIONS = 500;
export const MAX_ATOMIC_OPERATIONS = 100;

export const bulkOpNames = ['create', 'update', 'upsert', 'delete'] as const;
export type BulkOpName = (typeof bulkOpNames)[number];

/** What each op expects of `id`, `external_id` and `data`; shown in the OpenAPI document. */
const opRules: Record<BulkOpName, string> = {
  create: '`create`: `data` as the create operation takes it; no `id`; an `external_id` is stored on the new record.',
  update: '`update`: `id` or `external_id` (exactly one) names the record; `data` as the PATCH operation takes it.',
  upsert: '`upsert`: `external_id` names the record, created (201) or updated (200); `data` as `PUT …/ext:{external_id}` takes it.',
  delete: '`delete`: `id` or `external_id` (exactly one) names the record; no `data`.',
};

/**
 * The request body for a resource whose bulk endpoint allows `ops`. `dataSchemas` only documents `data`
 * (under `x-data-schemas`); the engine, not the route, validates it.
 */
export function BulkRequest(ops: readonly BulkOpName[], dataSchemas: Partial<Record<BulkOpName, TSchema>>) {
  const Item = Type.Object(
    {
      ref: Type.String({ minLength: 1, maxLength: 100, description: 'Your label for the operation, unique in the request, echoed in its result.' }),
      op: Type.Unsafe<string>({ type: 'string', enum: [...ops] }),
      id: Type.Optional(Uuid({ description: 'The record to update or delete.' })),
      external_id: Type.Optional(ExternalId),
      data: Type.Optional(
        Type.Unsafe<Record<string, unknown>>({
          type: 'object',
          description: 'The record’s fields, validated per operation against the schema under `x-data-schemas` for its `op`; invalid data fails that operation alone (status 422).',
          'x-data-schemas': dataSchemas,
        }),
      ),
    },
    { additionalProperties: false, description: ops.map((op) => opRules[op]).join(' ') },
  );
  return Type.Object(
    {
      operations: Type.Array(Item, {
        minItems: 1,
        description: `Up to ${MAX_OPERATIONS} operations (${MAX_ATOMIC_OPERATIONS} when \`atomic\`), each with a distinct \`ref\`. More is a 413 \`bulk.too_many_operations\` and nothing runs.`,
      }),
      atomic: Type.Optional(
        Type.Boolean({
          default: false,
          description: `true: all operations succeed or none does; the first failure rolls back the others, which report 409 \`bulk.rolled_back\`. At most ${MAX_ATOMIC_OPERATIONS} operations.`,
        }),
      ),
    },
    { additionalProperties: false },
  );
}

const BulkError = Type.Object(
  {
    code: Type.String(),
    category: Type.String(),
    detail: Type.String({ description: 'Names each invalid field by its JSON Pointer into the request body (`/operations/3/data/title: …`).' }),
  },
  { additionalProperties: false, description: 'Why the operation failed: the error document the operation would have had alone, without its envelope.' },
);

/**
 * A result's `data` under `Prefer: return=minimal` (RFC 7240): only the record's id, enough to map each `ref`
 * to its record without the whole record being written, recorded and sent (a roster sync only counts).
 */
export const BulkResultId = named('BulkResultId', Type.Object(
  { id: Uuid({ description: 'The record the operation created or changed.' }) },
  { additionalProperties: false, description: 'With `Prefer: return=minimal`: the record’s id only.' },
));

/** The response of a resource's bulk endpoint, named after the resource (`LessonPageBulkResponse`). */
export function BulkResponse(item: TSchema) {
  // Optional copies the item's schema; the copy keeps its name, so the document refers to the resource.
  return namedAfter(item, 'BulkResponse', bulkResponseWith(namedAfter(item, '', Type.Optional(item)), exampleOf(item)));
}

/** The same, answered to `Prefer: return=minimal`: each success's `data` is `{ id }` (`LessonPageBulkMinimalResponse`). */
export function BulkMinimalResponse(item: TSchema) {
  return namedAfter(item, 'BulkMinimalResponse', bulkResponseWith(namedAfter(BulkResultId, '', Type.Optional(BulkResultId)), exampleOf(BulkResultId)));
}

/** The envelope both answers share; only what a success's `data` holds differs. */
function bulkResponseWith(data: TSchema, dataExample: unknown) {
  const Result = Type.Object(
    {
      ref: Type.String({ maxLength: 100 }),
      status: Type.Integer({
        description: 'The HTTP status the operation would have had alone: 201 created, 200 updated, 204 deleted, 404/409/422 for its failure; 409 `bulk.rolled_back` for an atomic request’s other operations when one failed.',
      }),
      data,
      unchanged: Type.Optional(
        Type.Literal(true, { description: 'Only on an upsert (status 200) that found the record already as asked: nothing was written, `updated_at` kept, no event.' }),
      ),
      error: Type.Optional(BulkError),
    },
    { additionalProperties: false },
  );
  return Type.Object(
    {
      summary: Type.Object(
        { total: Type.Integer(), succeeded: Type.Integer(), failed: Type.Integer() },
        { additionalProperties: false, examples: [{ total: 2, succeeded: 1, failed: 1 }] },
      ),
      results: Type.Array(Result, {
        description: 'One per operation, in request order.',
        // One that succeeded and one that failed, as a reference should show both.
        examples: [
          [
            { ref: 'intro', status: 201, data: dataExample },
            { ref: 'quiz', status: 422, error: { code: 'validation.invalid_body', category: 'validation', detail: '/operations/1/data/title: `title` must not be empty.' } },
          ],
        ],
      }),
    },
    { additionalProperties: false },
  );
}
