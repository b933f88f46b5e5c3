// Builds the OpenAPI 3.1 document from the operation registry: one source for routes and documentation.
import Type, { type TSchema } from 'typebox';
import { errorCatalog } from '../errors/error-catalog.ts';
import { addExamples } from './openapi-examples.ts';
import type { Operation } from '../operations/operation.ts';
import { API_PREFIX } from '../http/registry.ts';
import type { Revisions } from '../operations/revisions.ts';
import { namedAfter, ProblemSchema, schemaName } from '../operations/schemas.ts';

type Json = Record<string, unknown>;

const statusText: Record<number, string> = {
  401: 'The credential is missing, malformed, expired or revoked (`WWW-Authenticate: Bearer`).',
  403: 'The credential lacks the scope, or the person lacks the capability.',
  404: 'No such resource, or none the credential may know about.',
  409: 'Conflict with the current state, with an earlier use of the same Idempotency-Key, or with a concurrent write.',
  412: "The organisation's plan lacks the API entitlement (`commerce.plan_entitlement`).",
  413: 'The request is too large: its body (`request.body_too_large`), or its request line or a path segment (`request.too_large`).',
  422: 'The request is understood but its content is invalid; `errors` names each body field. Also a body that is not `application/json` (`request.unsupported_media_type`), not JSON (`request.malformed_json`) or nested deeper than 64 levels (`request.too_deep`).',
  429: 'Rate limit or concurrency cap reached; retry after `Retry-After` seconds.',
  500: 'Failure on the service side; safe to retry with the same Idempotency-Key.',
  502: 'The database cannot be reached at the moment (`database.unavailable`); retry after `Retry-After` seconds.',
};

/** The statuses an operation can answer besides its success: the spec's list plus the shared ones. */
export function documentedStatuses(op: Operation): number[] {
  // 413: any request line can be too long, any body too large; 502: any operation needs the database.
  const s = new Set<number>([...op.errors, 401, 403, 413, 422, 429, 500, 502]);
  if (op.scope === null) s.delete(403);
  if (op.writes) s.add(412);
  // docs/conventions.md#idempotency — the same key for another request, or while the first still runs, is a 409.
  if (op.idempotency) s.add(409);
  return [...s].sort((a, b) => a - b);
}

function stripIds(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(stripIds);
  if (schema && typeof schema === 'object') {
    const out: Json = {};
    for (const [k, v] of Object.entries(schema)) if (k !== '$id') out[k] = stripIds(v);
    return out;
  }
  return schema;
}

/**
 * The document's `components/schemas`: each named schema (operations/schemas.ts `named`) is written there once and
 * `$ref`d wherever a body holds it, so that client generators make one `Section` model rather than one per
 * response. A success body is always a `$ref`: one without a name (an earlier revision's shape) is named after
 * its operation (`CreateWidgetResponse`), and so is one whose name a different shape took first in this
 * document, as when a revision changes a resource for some of its operations only.
 */
function schemaComponents() {
  const schemas: Record<string, Json> = {};
  const texts = new Map<string, string>();
  const refTo = (name: string) => ({ $ref: `#/components/schemas/${name}` });
  /** Writes `schema` under `name`; false when a different schema has the name already. */
  const put = (name: string, schema: object): boolean => {
    const written = inline(schema);
    const text = JSON.stringify(written);
    const known = texts.get(name);
    if (known === undefined) {
      texts.set(name, text);
      schemas[name] = written;
    }
    return known === undefined || known === text;
  };
  const write = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(write);
    if (value === null || typeof value !== 'object') return value;
    const name = schemaName(value);
    return name !== undefined && put(name, value) ? refTo(name) : inline(value);
  };
  // TypeBox's own markers are not enumerable; `$id` is dropped (the document names schemas by their key).
  function inline(schema: object): Json {
    const out: Json = {};
    for (const [k, v] of Object.entries(schema)) if (k !== '$id') out[k] = write(v);
    return out;
  }
  return {
    schemas,
    write,
    successBody(schema: object, op: Operation): Json {
      const name = schemaName(schema);
      if (name !== undefined && put(name, schema)) return refTo(name);
      const own = `${op.id.charAt(0).toUpperCase()}${op.id.slice(1)}Response`;
      if (!put(own, schema)) throw new Error(`two success schemas of ${op.id}`);
      return refTo(own);
    },
  };
}

/** Replaces the bodies' schemas in `document` (written with the declarations' own objects) by components and `$ref`s. */
function moveSchemasToComponents(document: Json, operations: readonly Operation[]): Record<string, Json> {
  const components = schemaComponents();
  for (const op of operations) {
    const entry = (document.paths as Record<string, Record<string, any>>)[op.path][op.method.toLowerCase()];
    const request = entry.requestBody?.content?.['application/json'];
    if (request) request.schema = components.write(request.schema);
    for (const [status, response] of Object.entries(entry.responses as Record<string, { content?: Record<string, Json> }>)) {
      const media = Number(status) < 300 ? response.content?.['application/json'] : undefined;
      if (media) media.schema = components.successBody(media.schema as object, op);
    }
  }
  return Object.fromEntries(Object.entries(components.schemas).sort(([a], [b]) => a.localeCompare(b)));
}

function parameters(op: Operation): Json[] {
  const out: Json[] = [];
  const add = (where: 'path' | 'query', schema: TSchema | undefined) => {
    const s = schema as unknown as { properties?: Record<string, Json>; required?: string[] } | undefined;
    for (const [name, prop] of Object.entries(s?.properties ?? {})) {
      const { description, ...rest } = prop;
      out.push({ name, in: where, required: where === 'path' || (s?.required ?? []).includes(name), ...(description ? { description } : {}), schema: stripIds(rest) });
    }
  };
  add('path', op.params);
  add('query', op.query);
  out.push({ $ref: '#/components/parameters/ServiceVersion' });
  if (op.idempotency) {
    out.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: op.idempotency === 'required',
      description: 'Up to 255 printable ASCII characters. A replay returns the recorded response with `Idempotency-Replayed: true`.',
      schema: { type: 'string', minLength: 1, maxLength: 255 },
    });
  }
  if (op.minimal) {
    out.push({
      name: 'Prefer',
      in: 'header',
      required: false,
      description:
        `RFC 7240 preferences. \`return=minimal\`: ${op.minimal.description} The answer then says \`Preference-Applied: return=minimal\`, and the preference is part of what an Idempotency-Key is bound to. ` +
        '`return=representation`, or no header: the full answer. Preferences this operation does not know, or cannot read, are ignored.',
      schema: { type: 'string', examples: ['return=minimal'] },
    });
  }
  return out;
}

/** The operation as callers on `revision` see it: schemas taken back through each later change, newest first. */
function asOfRevision(op: Operation, revisions: Revisions, revision: string): Operation {
  const changes = revisions.changesSince(revision, op.id).reverse();
  if (changes.length === 0) return op;
  let body = op.body;
  let schema = op.success.schema;
  for (const change of changes) {
    if (body && change.downgradeRequestSchema) body = change.downgradeRequestSchema(body);
    if (schema && change.downgradeResponseSchema) schema = change.downgradeResponseSchema(schema);
  }
  // The declared example is of the current request shape; an earlier shape gets one made from its schema.
  return { ...op, body, bodyExample: body === op.body ? op.bodyExample : undefined, success: { ...op.success, schema } };
}

function operationObject(op: Operation): Json {
  const rateLimitHeaders: Json = {
    'RateLimit-Limit': { $ref: '#/components/headers/RateLimitLimit' },
    'RateLimit-Remaining': { $ref: '#/components/headers/RateLimitRemaining' },
    'RateLimit-Reset': { $ref: '#/components/headers/RateLimitReset' },
  };
  const responseHeaders: Json = {
    'Request-Id': { $ref: '#/components/headers/RequestId' },
    'Service-Version': { $ref: '#/components/headers/ServiceVersion' },
    ...rateLimitHeaders,
    ...(op.idempotency ? { 'Idempotency-Replayed': { $ref: '#/components/headers/IdempotencyReplayed' } } : {}),
    ...(op.minimal ? { 'Preference-Applied': { $ref: '#/components/headers/PreferenceApplied' } } : {}),
  };
  // With `Prefer: return=minimal` the success has the minimal shape: either one may come. Named after the full
  // one (`EnrolmentBulkResponseOrMinimal`), so that the body stays a `$ref` and both shapes are components.
  const successSchema = op.success.schema && op.minimal ? namedAfter(op.success.schema, 'OrMinimal', Type.Union([op.success.schema, op.minimal.schema])) : op.success.schema;
  const responses: Json = {};
  for (const status of [op.success.status, ...(op.success.alsoStatuses ?? [])]) {
    responses[String(status)] = {
      description: op.success.description,
      headers: responseHeaders,
      ...(op.success.binary ? { content: { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } } : {}),
      ...(successSchema ? { content: { 'application/json': { schema: successSchema } } } : {}),
    };
  }
  for (const status of documentedStatuses(op)) {
    responses[String(status)] = {
      description: statusText[status] ?? 'Error.',
      headers: {
        'Request-Id': { $ref: '#/components/headers/RequestId' },
        ...(status === 429 || status === 409 || status === 502 ? { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } } : {}),
        ...(status === 429 ? rateLimitHeaders : {}),
      },
      content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
    };
  }
  const requirements = [op.scope ? `Scope \`${op.scope}\`` : 'Any valid credential', op.capability ? `capability \`${op.capability}\`` : null].filter(Boolean).join('; ');
  return {
    operationId: op.id,
    summary: op.summary,
    description: [op.description, `Requires: ${requirements}.`].filter(Boolean).join('\n\n'),
    tags: [op.tag],
    security: [{ bearerAuth: op.scope ? [op.scope] : [] }],
    'x-required-scope': op.scope,
    'x-required-capability': op.capability,
    'x-writes': op.writes,
    ...(op.destructive ? { 'x-destructive': true } : {}),
    parameters: parameters(op),
    ...(op.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: op.body, ...(op.bodyExample !== undefined ? { example: op.bodyExample } : {}) } } } }
      : {}),
    responses,
  };
}

/** `errorsUrl`: the base of problem `type` URIs in the examples (the deployment's `ERRORS_URL`). */
export function buildOpenApiDocument(operations: Operation[], opts: { serverUrl: string; revisions: Revisions; revision?: string; errorsUrl?: string }): Json {
  const revision = opts.revision ?? opts.revisions.current;
  const paths: Record<string, Json> = {};
  const asOfThisRevision = operations.map((op) => asOfRevision(op, opts.revisions, revision));
  for (const op of asOfThisRevision) {
    const item = (paths[op.path] ??= {});
    item[op.method.toLowerCase()] = operationObject(op);
  }
  const document = {
    openapi: '3.1.0',
    info: {
      title: 'Atrium learning-platform API',
      version: revision,
      description:
        'Multi-tenant learning-platform REST API. Errors are RFC 9457 problem documents whose `code` values are listed under `x-error-codes`. ' +
        `This document describes revision ${revision}. Revisions: ${opts.revisions.list.join(', ')}; select one with the \`Service-Version\` header. ` +
        'What changed in each: `GET /api/v1/revisions` (no credential needed); a browsable reference: `/api/v1/docs`; each error code: `/docs/errors/<code>`. ' +
        'Unknown organisation addresses answer 404 `tenancy.unknown_organisation`, and over-long request lines or path segments 413 `request.too_large`, before any operation is chosen.',
    },
    servers: [{ url: opts.serverUrl + API_PREFIX }],
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key (`atr_live_…` / `atr_test_…`) or an OAuth 2 access token.' } },
      schemas: { Problem: stripIds(ProblemSchema) },
      parameters: {
        ServiceVersion: {
          name: 'Service-Version',
          in: 'header',
          required: false,
          description: 'A date (YYYY-MM-DD); the newest revision on or before it applies. Default: the revision pinned on the credential.',
          schema: { type: 'string', format: 'date' },
        },
      },
      headers: {
        RequestId: { description: 'Identifies this request; quote it to support. Equals `request_id` in problem documents.', schema: { type: 'string' } },
        ServiceVersion: { description: 'The revision applied to this request.', schema: { type: 'string', format: 'date' } },
        PreferenceApplied: { description: '`return=minimal` when the answer is the minimal one the request’s `Prefer` header asked for (RFC 7240).', schema: { type: 'string', enum: ['return=minimal'] } },
        IdempotencyReplayed: { description: '`true` when this is the recorded response of an earlier request with the same key.', schema: { type: 'string', enum: ['true'] } },
        RetryAfter: { description: 'Seconds to wait before retrying (429; 409 `idempotency.in_progress`; 502 `database.unavailable`).', schema: { type: 'integer' } },
        RateLimitLimit: { description: 'Requests allowed per window for this credential.', schema: { type: 'integer' } },
        RateLimitRemaining: { description: 'Requests left in the current window.', schema: { type: 'integer' } },
        RateLimitReset: { description: 'Seconds until the window resets.', schema: { type: 'integer' } },
      },
    },
    'x-error-codes': Object.fromEntries(Object.entries(errorCatalog).map(([code, e]) => [code, { status: e.status, category: e.category, title: e.title }])),
  };
  // The examples are made from the schemas where they stand, before these become `$ref`s.
  addExamples(document, asOfThisRevision, opts.errorsUrl ?? 'https://errors.atrium.example');
  Object.assign(document.components.schemas, moveSchemasToComponents(document, asOfThisRevision));
  return document;
}
