// Documentation served by the API itself: the OpenAPI document (per organisation address and revision)
// and one page per error code, which every problem document's `type` and `docs_url` point at.
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import { buildOpenApiDocument } from './openapi.ts';
import type { Operation } from '../operations/operation.ts';
import { API_PREFIX } from '../http/registry.ts';
import { createTenancyHook } from '../http/pipeline.ts';
import type { Revisions } from '../operations/revisions.ts';
import { documentedRevision } from './requested-revision.ts';
import { registerReferenceRoutes } from './reference.ts';
import { registerErrorPages } from './error-pages.ts';
import { publicOrigin } from '../public-origin.ts';

export function registerDocsRoutes(app: FastifyInstance, opts: { operations: Operation[]; config: Config; revisions: Revisions }): void {
  const cache = new Map<string, string>();
  const { config } = opts;

  app.get(`${API_PREFIX}/openapi.json`, { onRequest: createTenancyHook(app.services.organisations) }, async (request, reply) => {
    // spec: Versioning 5 — the document reflects the revision asked for (`Service-Version`, or `?version=` as a
    // browser sends it; without either and without a credential: the current one).
    const revision = documentedRevision(opts.revisions, request);
    const serverUrl = publicOrigin(config, request.organisation!.address);
    const key = `${serverUrl} ${revision}`;
    let body = cache.get(key);
    if (body === undefined) {
      body = JSON.stringify(buildOpenApiDocument(opts.operations, { serverUrl, revision, revisions: opts.revisions, errorsUrl: config.errorsUrl }));
      cache.set(key, body);
    }
    return reply.header('Service-Version', revision).type('application/json').send(body);
  });

  registerReferenceRoutes(app, opts);

  registerErrorPages(app, opts);
}

