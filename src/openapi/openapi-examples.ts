// Examples for every operation of the OpenAPI document, so that a reference shows a request and each response:
// the declaration's `bodyExample` for the request (or one made from the schema where the revision's request
// shape differs), a success made from the response schema — carrying the request's own values where the
// fields match, so a rename answers with the new title — and, for each error status, one problem document per
// code the operation can answer with. test/openapi-examples.test.ts validates each against its schema.
import { errorCatalog, type ErrorCode } from '../errors/error-catalog.ts';
import { errorExplanations } from '../errors/error-explanations.ts';
import { exampleOf } from '../operations/example-values.ts';
import type { Operation } from '../operations/operation.ts';
import { errorCodesWithStatus } from '../operations/operation-errors.ts';

type Json = Record<string, any>;

const EXAMPLE_REQUEST_ID = 'req_3f6c2a9d8b7e4c1a9f0e2d4b6a8c0e1f';

/** The problem document an operation answers with for `code`, as the service writes it. */
export function exampleProblem(code: ErrorCode, errorsUrl: string): Json {
  const entry = errorCatalog[code];
  const explanation = errorExplanations[code];
  const url = `${errorsUrl}/${code}`;
  return {
    type: url,
    title: entry.title,
    status: entry.status,
    code,
    category: entry.category,
    detail: explanation.exampleDetail,
    request_id: EXAMPLE_REQUEST_ID,
    docs_url: url,
    ...(explanation.exampleErrors ? { errors: explanation.exampleErrors } : {}),
    ...(retryAfterExample[code] !== undefined ? { retry_after: retryAfterExample[code] } : {}),
  };
}

/** The codes whose problem documents carry `retry_after` (and a Retry-After header), with a typical value. */
const retryAfterExample: Partial<Record<ErrorCode, number>> = { 'rate_limit.exceeded': 17, 'rate_limit.concurrency': 1, 'idempotency.in_progress': 1, 'database.unavailable': 5, 'service.unavailable': 5, 'shared_state.unavailable': 5 };

const isPrimitive = (v: unknown) => v === null || ['string', 'number', 'boolean'].includes(typeof v);

/** The response example with the request example's top-level values where both have the field, of one type. */
function echoRequest(response: unknown, request: unknown): unknown {
  if (!response || typeof response !== 'object' || Array.isArray(response) || !request || typeof request !== 'object') return response;
  const out: Json = { ...(response as Json) };
  for (const [key, value] of Object.entries(request as Json)) {
    if (key in out && isPrimitive(value) && value !== null && typeof out[key] === typeof value) out[key] = value;
  }
  return out;
}

/** Adds the examples to `doc` (built by buildOpenApiDocument for these operations) in place, and returns it. */
export function addExamples(doc: Json, operations: readonly Operation[], errorsUrl: string): Json {
  const serviceVersion = doc.components?.parameters?.ServiceVersion;
  if (serviceVersion && serviceVersion.example === undefined) serviceVersion.example = doc.info?.version;
  for (const op of operations) {
    const entry = doc.paths?.[op.path]?.[op.method.toLowerCase()];
    if (!entry) continue;
    const requestMedia = entry.requestBody?.content?.['application/json'];
    if (requestMedia && requestMedia.example === undefined) requestMedia.example = exampleOf(requestMedia.schema, op.id);
    for (const param of entry.parameters ?? []) {
      if (param.in && param.example === undefined && param.schema) param.example = exampleOf(param.schema, param.name);
    }
    for (const [status, response] of Object.entries(entry.responses as Record<string, Json>)) {
      const code = Number(status);
      if (code < 400) {
        const media = response.content?.['application/json'];
        if (media?.schema && media.example === undefined) media.example = echoRequest(exampleOf(media.schema, op.id), requestMedia?.example);
        continue;
      }
      const media = response.content?.['application/problem+json'];
      if (!media) continue;
      const codes = errorCodesWithStatus(op, code);
      if (codes.length === 0) continue;
      media.examples = Object.fromEntries(codes.map((c) => [c, { summary: `\`${c}\`: ${errorCatalog[c].title}`, value: exampleProblem(c, errorsUrl) }]));
      response.description = `${response.description} Codes: ${codes.map((c) => `[\`${c}\`](${errorsUrl}/${c})`).join(', ')}.`;
      response['x-error-codes'] = codes;
    }
  }
  return doc;
}
