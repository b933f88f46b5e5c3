// The API reference on every organisation's address (`/api/v1/docs`): a browsable page rendered in the browser
// from the OpenAPI document of the revision asked for, by a renderer we ship and serve (no other host is
// contacted), plus the dated revisions as JSON (`/api/v1/revisions`, no credential needed, like openapi.json).
import type { FastifyInstance } from 'fastify';
import { createTenancyHook } from '../http/pipeline.ts';
import type { Operation } from '../operations/operation.ts';
import { API_PREFIX } from '../http/registry.ts';
import type { Revisions } from '../operations/revisions.ts';
import { assetUrls, registerAssetRoutes } from './assets.ts';
import { DOCS_CSP, escapeHtml, markdownCode, referenceAnchor } from './html.ts';
import { documentedRevision } from './requested-revision.ts';
import { revisionHistory } from './revision-history.ts';

export const REFERENCE_PATH = `${API_PREFIX}/docs`;

function referencePage(revision: string, revisions: Revisions): string {
  const urls = assetUrls();
  const options = [...revisions.list]
    .reverse()
    .map((r) => `<option value="${r}"${r === revision ? ' selected' : ''}>${r}${r === revisions.current ? ' (current)' : ''}</option>`)
    .join('');
  const documentUrl = `${API_PREFIX}/openapi.json?version=${revision}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Atrium API reference · revision ${escapeHtml(revision)}</title>
<link rel="stylesheet" href="${urls.stylesheet}">
</head>
<body class="reference">
<header class="docs-bar">
  <a class="brand" href="${REFERENCE_PATH}">Atrium API reference</a>
  <form id="revision-form" method="get" action="${REFERENCE_PATH}">
    <label for="revision">Revision</label>
    <select id="revision" name="version">${options}</select>
    <button type="submit">Show</button>
  </form>
  <nav aria-label="Documentation">
    <a href="${REFERENCE_PATH}/revisions">Changes by revision</a>
    <a href="/docs/errors">Error codes</a>
    <a href="${escapeHtml(documentUrl)}">OpenAPI document</a>
  </nav>
</header>
<noscript><p class="noscript">The reference needs JavaScript. Without it, read the <a href="${escapeHtml(documentUrl)}">OpenAPI document</a> of revision ${escapeHtml(revision)}.</p></noscript>
<main id="reference" data-openapi-url="${escapeHtml(documentUrl)}" data-revision="${escapeHtml(revision)}"></main>
<script src="${urls.renderer}"></script>
<script src="${urls.boot}"></script>
</body>
</html>
`;
}

export function registerReferenceRoutes(app: FastifyInstance, opts: { operations: Operation[]; revisions: Revisions }): void {
  const { revisions } = opts;
  const onRequest = createTenancyHook(app.services.organisations);
  registerAssetRoutes(app);

  app.get(REFERENCE_PATH, { onRequest }, async (request, reply) => {
    const revision = documentedRevision(revisions, request);
    return reply
      .header('Content-Security-Policy', DOCS_CSP)
      .header('X-Content-Type-Options', 'nosniff')
      .header('Referrer-Policy', 'same-origin')
      .header('Service-Version', revision)
      .type('text/html; charset=utf-8')
      .send(referencePage(revision, revisions));
  });

  const history = revisionHistory(revisions, opts.operations);
  app.get(`${API_PREFIX}/revisions`, { onRequest }, async () => history);

  app.get(`${REFERENCE_PATH}/revisions`, { onRequest }, async (_request, reply) => {
    const html = await reply.viewAsync('docs/revisions', {
      title: 'Revisions of API v1',
      history,
      referenceHref: REFERENCE_PATH,
      anchor: (op: { tag: string; id: string }) => referenceAnchor(op),
      md: markdownCode,
    });
    return reply.header('Content-Security-Policy', DOCS_CSP).header('X-Content-Type-Options', 'nosniff').type('text/html; charset=utf-8').send(html);
  });
}
