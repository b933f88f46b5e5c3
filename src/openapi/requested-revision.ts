// The revision a documentation request asks for: `?version=YYYY-MM-DD` (what a browser can send) or the
// `Service-Version` header (what a client sends); without either, the current one. A bad value is the
// usual 422 `versioning.invalid_revision`, as on every operation.
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error.ts';
import { requestedRevision } from '../http/pipeline.ts';
import { FIRST_REVISION, type Revisions } from '../operations/revisions.ts';

export function documentedRevision(revisions: Revisions, request: FastifyRequest): string {
  const query = (request.query ?? {}) as Record<string, unknown>;
  if (query.version !== undefined) {
    const revision = typeof query.version === 'string' ? revisions.resolve(query.version) : undefined;
    if (revision === undefined) {
      throw new ApiError('versioning.invalid_revision', `Query parameter \`version\` must be a date (YYYY-MM-DD) on or after the first revision, ${FIRST_REVISION}.`);
    }
    return revision;
  }
  return requestedRevision(revisions, request.headers['service-version']) ?? revisions.current;
}
