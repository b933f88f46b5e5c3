// Every error response is an RFC 9457 problem document, whatever raised it: our ApiError, Fastify's own
// errors (unknown route, media type, body too large), schema validation, a database that is away, or an
// unexpected throw. This is the document's one shape; http/error-handler.ts decides which error it is.
import type { FastifyReply } from 'fastify';
import type { ApiError } from './api-error.ts';

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
