// The documentation the service serves besides the reference's browser view: the error pages (one per code,
// reached from every problem document's docs_url), the catalogue by area, the revisions as JSON and as a page,
// and the reference page's own answers (its revision, its headers, its assets).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../src/errors/api-error.ts';
import { errorCatalog, type ErrorCode } from '../src/errors/error-catalog.ts';
import { errorExplanations } from '../src/errors/error-explanations.ts';
import { bulkResultCodesOf, errorCodesOf } from '../src/operations/operation-errors.ts';
import { problemBody } from '../src/errors/problems.ts';
import { operations } from '../src/all-operations.ts';
import { startTestApp, type TestContext } from './support/harness.ts';
import type { Caller } from './support/factories.ts';

const codes = Object.keys(errorCatalog) as ErrorCode[];

describe('documentation pages', () => {
  let t: TestContext;
  let c: Caller;
  before(async () => {
    t = await startTestApp();
    c = await t.make.caller();
  });
  after(() => t.close());

  /** GET an absolute URL of this service (as ERRORS_URL names it) through the app. */
  const getUrl = (url: string) => {
    const u = new URL(url);
    return t.app.inject({ method: 'GET', url: u.pathname + u.search, headers: { host: u.host } });
  };

  test('every code of the catalogue has its explanation', () => {
    for (const code of codes) {
      const e = errorExplanations[code];
      assert.ok(e, `${code} has no explanation in src/errors/error-explanations.ts`);
      for (const field of ['happened', 'fix', 'retry', 'exampleDetail'] as const) assert.ok(e[field].trim().length > 0, `${code}: empty ${field}`);
      assert.ok(e.causes.length > 0, `${code}: no causes`);
    }
    assert.deepEqual(Object.keys(errorExplanations).sort(), [...codes].sort(), 'explanations of codes that are not in the catalogue');
  });

  test("every problem document's docs_url answers 200 with the page of its code", async () => {
    for (const code of codes) {
      const { docs_url } = problemBody(new ApiError(code), 'req_test', t.config.errorsUrl);
      const page = await getUrl(docs_url);
      assert.equal(page.statusCode, 200, `${code}: ${docs_url} answered ${page.statusCode}`);
      assert.match(String(page.headers['content-type']), /^text\/html/);
      assert.ok(page.body.includes(`<h1><code>${code}</code></h1>`), `${code}: not its page`);
      for (const heading of ['What happened', 'Usual causes', 'How to fix it', 'Example problem document', 'Operations that answer with it']) assert.ok(page.body.includes(heading), `${code}: no ${heading}`);
      const quote = '(?:"|&quot;|&#34;)';
      assert.match(page.body, new RegExp(`${quote}code${quote}: ${quote}${code.replace('.', '\\.')}${quote}`), `${code}: no example problem document`);
    }
    // And a problem document the service really answered with.
    const refused = await t.api.request({ host: c.org.address, path: '/api/v1/sections' });
    assert.equal(refused.status, 401);
    const page = await getUrl(refused.body.docs_url);
    assert.equal(page.statusCode, 200);
    assert.ok(page.body.includes('<h1><code>auth.missing_credential</code></h1>'));
  });

  test('a page names the operations that answer with its code, linked to the reference, and no others', async () => {
    const page = (await getUrl(`${t.config.errorsUrl}/section.deleted`)).body;
    for (const id of ['updateSection', 'deleteSection', 'upsertSectionByExternalId']) assert.ok(page.includes(`href="/api/v1/docs#tag/sections/${id}"`), id);
    for (const id of ['createSection', 'getSection', 'updateCourse']) assert.ok(!page.includes(`/${id}"`), `${id} is listed but never answers section.deleted`);
    const every = (await getUrl(`${t.config.errorsUrl}/auth.missing_credential`)).body;
    assert.ok(every.includes('Every operation of the API can answer with this code'));
    const scope = (await getUrl(`${t.config.errorsUrl}/auth.insufficient_scope`)).body;
    assert.ok(scope.includes('except:') && scope.includes('#tag/caller/getMe'), 'getMe needs no scope');
    const rolledBack = (await getUrl(`${t.config.errorsUrl}/bulk.rolled_back`)).body;
    assert.ok(rolledBack.includes('Inside bulk results') && rolledBack.includes('/bulkLessonPages"') && rolledBack.includes('/bulkEmailMessages"'));
    assert.ok(rolledBack.includes('>Apply up to 500 lesson page operations</a>') && rolledBack.includes('>Apply up to 500 email message operations</a>'));
    // Every code met only inside bulk results (no operation answers with it as a problem document) names the
    // bulk operations whose results carry it, by their summaries.
    const bulkOnly = codes.filter((code) => operations.every((op) => !errorCodesOf(op).includes(code)) && operations.some((op) => bulkResultCodesOf(op, operations).includes(code)));
    assert.ok(bulkOnly.includes('bulk.rolled_back'));
    for (const code of bulkOnly) {
      const page = (await getUrl(`${t.config.errorsUrl}/${code}`)).body;
      assert.ok(page.includes('No operation of the REST API answers with this code as a problem document; it is reported inside bulk results'), code);
      for (const op of operations.filter((o) => bulkResultCodesOf(o, operations).includes(code))) assert.ok(page.includes(`/${op.id}">${op.summary}</a>`), `${code}: ${op.id}`);
    }
  });

  test('the catalogue groups the codes by area with a table of contents, and searches without JavaScript', async () => {
    const index = await t.app.inject({ url: '/docs/errors' });
    assert.equal(index.statusCode, 200);
    for (const code of codes) assert.ok(index.body.includes(`href="/docs/errors/${code}"`), code);
    for (const area of new Set(codes.map((code) => code.split('.')[0]))) {
      assert.ok(index.body.includes(`id="area-${area}"`) && index.body.includes(`href="/docs/errors#area-${area}"`), area);
    }
    assert.ok(!/<script/i.test(index.body), 'the pages carry no script');
    assert.ok(!String(index.headers['content-security-policy']).includes('script-src'), 'no script allowed at all');
    assert.match(index.body, /<link rel="stylesheet" href="\/assets\/atrium\.css\?v=/);
    const found = await t.app.inject({ url: '/docs/errors?q=idempotency' });
    assert.ok(found.body.includes('/docs/errors/idempotency.key_reused') && !found.body.includes('/docs/errors/section.deleted"'));
    assert.ok((await t.app.inject({ url: '/docs/errors?q=zzzz-nothing' })).body.includes('No code matches'));
    const unknown = await t.app.inject({ url: '/docs/errors/nope.nope' });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().code, 'request.route_not_found');
  });

  test('revisions: GET /api/v1/revisions without a credential, and the page that lists what changed', async () => {
    const json = await t.api.request({ host: c.org.address, path: '/api/v1/revisions' });
    assert.equal(json.status, 200);
    assert.deepEqual(json.body, { current: '2026-11-01', data: [{ revision: '2026-11-01', current: true, changes: [] }] });
    const page = await t.app.inject({ url: '/api/v1/docs/revisions', headers: { host: c.org.address } });
    assert.equal(page.statusCode, 200);
    assert.ok(page.body.includes('id="r-2026-11-01"') && page.body.includes('The first revision of v1'));
    assert.equal((await t.app.inject({ url: '/api/v1/revisions', headers: { host: 'nowhere.test' } })).statusCode, 404);
  });

  test('the reference page: the revision asked for, a 422 for a bad one, a CSP without inline script, assets cached a year', async () => {
    const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ url, headers: { host: c.org.address, ...headers } });
    const page = await get('/api/v1/docs?version=2027-02-02');
    assert.equal(page.statusCode, 200);
    assert.equal(page.headers['service-version'], '2026-11-01');
    assert.ok(page.body.includes('data-openapi-url="/api/v1/openapi.json?version=2026-11-01"'));
    assert.ok(!/<script>|<script [^>]*>[^<]/.test(page.body), 'no inline script');
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, /script-src 'self';/);
    assert.ok(!/script-src[^;]*unsafe/.test(csp));
    for (const [url, headers] of [['/api/v1/docs?version=2026-10-31', {}], ['/api/v1/docs?version=soon', {}], ['/api/v1/docs', { 'service-version': 'yesterday' }], ['/api/v1/openapi.json?version=2026-1-1', {}]] as const) {
      const bad = await get(url, headers);
      assert.equal(bad.statusCode, 422, url);
      assert.equal(bad.json().code, 'versioning.invalid_revision');
    }
    assert.equal((await get('/api/v1/openapi.json?version=2026-11-01')).json().info.version, '2026-11-01');
    for (const src of page.body.matchAll(/<(?:script src|link rel="stylesheet" href)="([^"]+)"/g)) {
      const asset = await t.app.inject({ url: src[1], headers: { 'accept-encoding': 'gzip' } });
      assert.equal(asset.statusCode, 200, src[1]);
      assert.equal(asset.headers['cache-control'], 'public, max-age=31536000, immutable');
      assert.equal(asset.headers['content-encoding'], 'gzip');
    }
    assert.equal((await t.app.inject({ url: '/docs/assets/reference.000000000000.js' })).statusCode, 404);
  });
});
