// Every error response is an RFC 9457 problem document, whatever raised it: our ApiError, Fastify's own
// errors (unknown route, media type, body too large), schema validation, a database that is away, or an
// unexpected throw.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DATABASE_RETRY_AFTER_S, describeDatabaseError, isDatabaseUnavailable } from '../db/availability.ts';
import { ApiError, type FieldError } from './api-error.ts';
import { NO_NUL_KEYWORD } from '../operations/nul-characters.ts';

interface AjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

const fieldCode: Record<string, string> = {
  required: 'required',
  additionalProperties: 'unknown_field',
  type: 'invalid_type',
  minLength: 'too_short',
  maxLength: 'too_long',
  minimum: 'out_of_range',
  maximum: 'out_of_range',
  exclusiveMinimum: 'out_of_range',
  exclusiveMaximum: 'out_of_range',
  minItems: 'too_few_items',
  maxItems: 'too_many_items',
  uniqueItems: 'duplicate_items',
  format: 'invalid_format',
  pattern: 'invalid_format',
  enum: 'invalid_value',
  const: 'invalid_value',
  minProperties: 'too_few_properties',
  maxProperties: 'too_many_properties',
  [NO_NUL_KEYWORD]: 'invalid_character',
};

const typeArticle: Record<string, string> = {
  object: 'an object',
  array: 'an array',
  string: 'a string',
  boolean: 'a boolean (true or false)',
  integer: 'an integer',
  number: 'a number',
  null: 'null',
};

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

function describe(e: AjvError, name: string): string {
  const p = e.params;
  switch (e.keyword) {
    case 'required':
      return `${name} is required.`;
    case 'additionalProperties':
      return `${name} is not a known field.`;
    case 'type':
      return `${name} must be ${String(p.type).split(',').map((t) => typeArticle[t] ?? t).join(' or ')}.`;
    case 'minLength':
      return p.limit === 1 ? `${name} must not be empty.` : `${name} must be at least ${p.limit} characters long.`;
    case 'maxLength':
      return `${name} must be at most ${p.limit} characters long.`;
    case 'minimum':
      return `${name} must be at least ${p.limit}.`;
    case 'maximum':
      return `${name} must be at most ${p.limit}.`;
    case 'enum':
      return `${name} must be one of: ${(p.allowedValues as unknown[]).join(', ')}.`;
    case 'const':
      return `${name} must be ${JSON.stringify(p.allowedValue)}.`;
    case NO_NUL_KEYWORD:
      return `${name} must not contain the NUL character (U+0000).`;
    default:
      return `${name} ${e.message ?? 'is invalid'}.`;
  }
}

/** Ajv errors → `errors[]` with one entry per offending field (first error wins), pointers into the body. */
export function bodyFieldErrors(errors: AjvError[]): FieldError[] {
  const byPath = new Map<string, FieldError>();
  for (const e of errors) {
    if (e.keyword === 'anyOf' || e.keyword === 'oneOf' || e.keyword === 'if') continue;
    let path = e.instancePath;
    if (e.keyword === 'required') path += '/' + escapePointer(String(e.params.missingProperty));
    if (e.keyword === 'additionalProperties') path += '/' + escapePointer(String(e.params.additionalProperty));
    if (byPath.has(path)) continue;
    const name = path === '' ? 'The body' : `\`${path.slice(1).split('/').at(-1)}\``;
    byPath.set(path, { path, code: fieldCode[e.keyword] ?? 'invalid', detail: describe(e, name) });
  }
  if (byPath.size === 0 && errors.length > 0) byPath.set(errors[0].instancePath, { path: errors[0].instancePath, code: 'invalid', detail: 'This value is invalid.' });
  return [...byPath.values()];
}

function queryProblem(errors: AjvError[], context: string): ApiError {
  const e = errors.find((x) => x.keyword !== 'anyOf') ?? errors[0];
  let name = e.instancePath.slice(1).split('/')[0];
  if (e.keyword === 'required') name = String(e.params.missingProperty);
  if (e.keyword === 'additionalProperties') name = String(e.params.additionalProperty);
  const where = context === 'headers' ? 'Header' : context === 'params' ? 'Path parameter' : 'Query parameter';
  const what = e.keyword === 'additionalProperties' ? `${where} \`${name}\` is not known here.` : describe(e, `${where} \`${name}\``);
  return new ApiError('validation.invalid_parameter', what);
}

/** Maps anything thrown during a request to an ApiError; unknown errors become a bare internal error. */
export function toApiError(error: FastifyError | Error, request: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error;
  const fe = error as FastifyError & { validation?: AjvError[]; validationContext?: string };
  if (fe.validation) {
    if (fe.validationContext === 'params') {
      const operation = request.routeOptions.config?.operation;
      // A NUL is refused at the field wherever it is (CONTRACT). An upsert creates what its path names, so a
      // path value that could never be valid is a 422 there; everywhere else it simply names nothing that
      // exists (CONTRACT: a path id that is not a UUID is a 404).
      const nul = fe.validation.filter((e) => e.keyword === NO_NUL_KEYWORD);
      if (nul.length > 0) return queryProblem(nul, 'params');
      if (operation?.method === 'PUT') return queryProblem(fe.validation, 'params');
      return new ApiError(operation?.notFoundCode ?? 'request.route_not_found');
    }
    if (fe.validationContext === 'body') {
      if (request.body === undefined || request.body === null) return new ApiError('request.body_required', 'This operation needs a JSON object as its body.');
      return new ApiError('validation.invalid_body', 'The request body is invalid; see `errors`.', { errors: bodyFieldErrors(fe.validation) });
    }
    return queryProblem(fe.validation, fe.validationContext ?? 'querystring');
  }
  if (isDatabaseUnavailable(error)) {
    return new ApiError('database.unavailable', `The database cannot serve this request at the moment; retry in ${DATABASE_RETRY_AFTER_S} seconds.`, { retryAfter: DATABASE_RETRY_AFTER_S });
  }
  switch (fe.code) {
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ApiError('request.too_large', 'A path segment is longer than this service accepts.');
    case 'FST_ERR_BAD_URL':
      return new ApiError('request.route_not_found', 'The URL is malformed.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return new ApiError('request.unsupported_media_type', 'Send request bodies as `Content-Type: application/json`.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('request.body_too_large', `The request body is larger than this service accepts (${request.routeOptions.bodyLimit} bytes).`);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('request.body_required', 'The body is empty but Content-Type says JSON.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('request.malformed_json', 'The request body is not valid JSON.');
  }
  if (error instanceof SyntaxError && fe.statusCode === 400) return new ApiError('request.malformed_json', 'The request body is not valid JSON.');
  if (fe.statusCode === 413) return new ApiError('request.body_too_large');
  if (fe.statusCode === 415) return new ApiError('request.unsupported_media_type');
  if (fe.statusCode === 414 || fe.statusCode === 431) return new ApiError('request.too_large');
  if (fe.statusCode === 404) return new ApiError('request.route_not_found');
  // Any other refusal of Fastify's (a 400 of some kind) is about the request's form: never a 500 for input.
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) return new ApiError('request.malformed', 'The request could not be read.');
  return new ApiError('internal.error', 'The request failed on our side. Quote the request_id if you contact support.');
}

export function problemBody(err: ApiError, requestId: string, errorsUrl: string) {
  const docs = `${errorsUrl}/${err.code}`;
  return {
    type: docs,
    title: err.title,
    status: err.status,
    code: err.code,
    category: err.category,
    detail: err.detail,
    request_id: requestId,
    docs_url: docs,
    ...(err.errors ? { errors: err.errors } : {}),
    ...(err.retryAfter !== undefined ? { retry_after: err.retryAfter } : {}),
  };
}

export function sendProblem(reply: FastifyReply, err: ApiError, errorsUrl: string): FastifyReply {
  // Also set here: errors raised by the router itself never reach the onRequest hook that sets it.
  reply.header('Request-Id', reply.request.id);
  if (err.headers) reply.headers(err.headers);
  if (err.retryAfter !== undefined) reply.header('Retry-After', String(err.retryAfter));
  return reply.code(err.status).type('application/problem+json').send(problemBody(err, reply.request.id, errorsUrl));
}

export function installProblemHandlers(app: FastifyInstance, errorsUrl: string): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const apiError = toApiError(error, request);
    if (apiError.code === 'database.unavailable') request.log.warn({ error: describeDatabaseError(error) }, 'database unavailable');
    else if (apiError.status >= 500) request.log.error({ err: error }, 'request failed');
    return sendProblem(reply, apiError, errorsUrl);
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, new ApiError('request.route_not_found', `There is no route ${request.method} ${request.url.split('?')[0]}.`), errorsUrl),
  );
}
