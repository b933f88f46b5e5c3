// Requests Node's HTTP parser refuses before Fastify sees them (a request line or headers over the 16 KiB
// limit, bytes that are not HTTP): answered as problem documents with the spec's statuses (docs/conventions.md#errors: the
// status table is exhaustive; a request line or path over the limit is a 413 `request.too_large`), where
// Fastify's default would answer 431 or 400 in its own format.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { ApiError } from '../errors/api-error.ts';
import { problemBody } from '../errors/problems.ts';

export function createClientErrorHandler(errorsUrl: string) {
  return function onClientError(err: NodeJS.ErrnoException, socket: Socket): void {
    // A reset connection has nobody to answer; a request that timed out has nobody waiting for the answer.
    if (err.code === 'ECONNRESET' || err.code === 'ERR_HTTP_REQUEST_TIMEOUT' || socket.destroyed || !socket.writable) {
      socket.destroy();
      return;
    }
    const problem =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? new ApiError('request.too_large', 'The request line and headers are larger than this service accepts (16 KiB).')
        : new ApiError('request.malformed', 'The request is not well-formed HTTP/1.1.');
    const requestId = `req_${randomUUID().replaceAll('-', '')}`;
    const body = JSON.stringify(problemBody(problem, requestId, errorsUrl));
    socket.end(
      `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\nContent-Type: application/problem+json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nRequest-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  };
}
