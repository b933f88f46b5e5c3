// Documentation served by the API itself: the OpenAPI document (per organisation address and revision)
// and one page per error code, which every problem document's `type` and `docs_url` point at.
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import { ApiError } from './api-error.ts';
import { errorCatalog, type ErrorCode } from './error-catalog.ts';
import { buildOpenApiDocument } from './openapi.ts';
import type { Operation } from './operation.ts';
import { API_PREFIX } from './registry.ts';
import { createTenancyHook } from './pipeline.ts';
import type { Revisions } from './revisions.ts';
import { documentedRevision } from '../docs/requested-revision.ts';
import { registerReferenceRoutes } from '../docs/reference.ts';
import { publicOrigin } from '../public-origin.ts';

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

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

  app.get('/docs/errors', async (_request, reply) => {
    const rows = Object.entries(errorCatalog)
      .map(([code, e]) => `<tr><td><a href="errors/${code}"><code>${code}</code></a></td><td>${e.status}</td><td>${e.category}</td><td>${escapeHtml(e.title)}</td></tr>`)
      .join('');
    return reply.type('text/html').send(`<!doctype html><title>Atrium error codes</title><h1>Error codes</h1><table><tr><th>code</th><th>status</th><th>category</th><th>title</th></tr>${rows}</table>`);
  });

  app.get<{ Params: { code: string } }>('/docs/errors/:code', async (request, reply) => {
    const code = request.params.code;
    if (!Object.hasOwn(errorCatalog, code)) throw new ApiError('request.route_not_found', `No error code ${code}.`);
    const e = errorCatalog[code as ErrorCode];
    return reply
      .type('text/html')
      .send(
        `<!doctype html><title>${code}</title><h1><code>${code}</code></h1><p>${escapeHtml(e.title)}.</p><p>HTTP status ${e.status}, category <code>${e.category}</code>. A client that does not recognise this code should act on its category.</p>`,
      );
  });
}

