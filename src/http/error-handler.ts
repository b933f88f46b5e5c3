// The one error handler: anything thrown during a request (our ApiError, including an operation's input
// refused by its schemas (src/operations/input-validation.ts); Fastify's own errors for an unknown route, a
// media type or a body too large; a database that is away; an unexpected throw) becomes an ApiError and is
// answered as a problem document. An MCP tool call's failure is mapped and logged the same way (problemFor).
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { DATABASE_RETRY_AFTER_S, describeDatabaseError, isDatabaseUnavailable } from '../db/availability.ts';
import { ApiError } from '../errors/api-error.ts';
import { sendProblem } from '../errors/problems.ts';

/** Maps anything thrown during a request to an ApiError; unknown errors become a bare internal error. */
export function toApiError(error: FastifyError | Error, request: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error;
  const fe = error as FastifyError;
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

/** The ApiError to answer `error` with, logged (with the request id) when it is ours to look into. */
export function problemFor(error: FastifyError | Error, request: FastifyRequest): ApiError {
  const apiError = toApiError(error, request);
  if (apiError.code === 'database.unavailable') request.log.warn({ error: describeDatabaseError(error) }, 'database unavailable');
  else if (apiError.status >= 500) request.log.error({ err: error }, 'request failed');
  return apiError;
}

export function installProblemHandlers(app: FastifyInstance, errorsUrl: string): void {
  app.setErrorHandler((error: FastifyError, request, reply) => sendProblem(reply, problemFor(error, request), errorsUrl));
  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, new ApiError('request.route_not_found', `There is no route ${request.method} ${request.url.split('?')[0]}.`), errorsUrl),
  );
}
