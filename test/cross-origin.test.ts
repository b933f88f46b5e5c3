// CORS and OPTIONS on the wire: the endpoints a browser-based client calls from any origin (the two OAuth
// metadata documents, /oauth/token, /oauth/register, /oauth/revoke, /mcp) answer a preflight and their answers
// with CORS headers, never allowing credentials; the sign-in, consent and admin pages answer no CORS request;
// and an unknown method or path, OPTIONS included, is the problem document request.route_not_found, never a
// library's plain-text `Not Found`.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Organisation } from '../src/domain/organisations/organisations.repository.ts';
import { endpoints } from '../src/auth/oauth/oauth-routes.ts';
import { startTestApp, type TestContext } from './support/harness.ts';
import { loopbackFetch } from './support/oauth.ts';

const SPA = 'https://spa.example';

describe('cross-origin requests and OPTIONS', () => {
  let t: TestContext;
  let org: Organisation;
  let origin: string;
  before(async () => {
    t = await startTestApp();
    await t.listen();
    org = await t.make.org({ address: `cors-${Math.random().toString(36).slice(2, 8)}.localhost` });
    origin = t.originOf(org.address);
  });
  after(() => t.close());

  const preflight = (path: string, method: string, headers: string) =>
    loopbackFetch(`${origin}${path}`, { method: 'OPTIONS', headers: { origin: SPA, 'access-control-request-method': method, 'access-control-request-headers': headers } });

  /** Allow-Origin is `*` or the caller's origin, and credentials are never allowed. */
  function assertAnyOrigin(res: Response, what: string) {
    assert.match(res.headers.get('access-control-allow-origin') ?? '', /^(\*|https:\/\/spa\.example)$/, what);
    assert.notEqual(res.headers.get('access-control-allow-credentials'), 'true', what);
  }

  function assertRouteNotFound(res: Response, body: string, what: string) {
    assert.equal(res.status, 404, what);
    assert.equal(res.headers.get('content-type'), 'application/problem+json; charset=utf-8', what);
    const problem = JSON.parse(body) as { code: string; request_id: string };
    assert.equal(problem.code, 'request.route_not_found', what);
    assert.equal(problem.request_id, res.headers.get('request-id'), what);
  }

  test('a preflight to each endpoint browser-based clients call is a 204 allowing the method and the headers asked for', async () => {
    const cases: Array<[string, string, string]> = [
      ['/.well-known/oauth-authorization-server', 'GET', 'accept'],
      ['/.well-known/oauth-protected-resource', 'GET', 'accept'],
      ['/.well-known/oauth-protected-resource/mcp', 'GET', 'accept'],
      ['/oauth/token', 'POST', 'content-type'],
      ['/oauth/register', 'POST', 'content-type'],
      ['/oauth/revoke', 'POST', 'content-type'],
      ['/mcp', 'POST', 'authorization, content-type, mcp-protocol-version'],
    ];
    for (const [path, method, headers] of cases) {
      const res = await preflight(path, method, headers);
      assert.equal(res.status, 204, path);
      assertAnyOrigin(res, path);
      assert.ok((res.headers.get('access-control-allow-methods') ?? '').split(/, */).includes(method), `${path}: ${res.headers.get('access-control-allow-methods')}`);
      const allowed = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/, */);
      for (const header of headers.split(', ')) assert.ok(allowed.includes(header), `${path} allows ${header}: ${allowed.join(', ')}`);
    }
  });

  test('their answers carry the CORS headers too: registration (accepted or refused), metadata, and /mcp exposing its challenge', async () => {
    const registered = await loopbackFetch(`${origin}/oauth/register`, {
      method: 'POST',
      headers: { origin: SPA, 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['http://127.0.0.1:8123/callback'], client_name: 'Browser app' }),
    });
    assert.equal(registered.status, 201, await registered.clone().text());
    assertAnyOrigin(registered, 'register');
    const refused = await loopbackFetch(`${origin}/oauth/register`, { method: 'POST', headers: { origin: SPA, 'content-type': 'application/json' }, body: '{"redirect_uris": []}' });
    assert.equal(refused.status, 400);
    assertAnyOrigin(refused, 'refused registration');

    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/oauth-protected-resource/mcp']) {
      const res = await loopbackFetch(`${origin}${path}`, { headers: { origin: SPA } });
      assert.equal(res.status, 200, path);
      assertAnyOrigin(res, path);
    }

    const mcp = await loopbackFetch(`${origin}/mcp`, { method: 'POST', headers: { origin: SPA, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    assert.equal(mcp.status, 401);
    assertAnyOrigin(mcp, '/mcp');
    const exposed = (mcp.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(/, */);
    for (const header of ['www-authenticate', 'mcp-protocol-version']) assert.ok(exposed.includes(header), header);
  });

  test('the sign-in, consent and admin pages answer no CORS request', async () => {
    for (const path of ['/login', '/admin', '/oauth/consent/nothing', '/admin/webhooks']) {
      const res = await loopbackFetch(`${origin}${path}`, { headers: { origin: SPA } });
      assert.equal(res.headers.get('access-control-allow-origin'), null, path);
      const pre = await preflight(path, 'POST', 'content-type');
      assert.equal(pre.headers.get('access-control-allow-origin'), null, `${path} preflight`);
      assertRouteNotFound(pre, await pre.text(), `OPTIONS ${path}`);
    }
  });

  test('OPTIONS, or any unknown method, on an unknown path is the problem document request.route_not_found', async () => {
    for (const [method, path] of [['OPTIONS', '/nowhere'], ['OPTIONS', '/oauth/nowhere'], ['OPTIONS', '/api/v1/nowhere'], ['PROPFIND', '/oauth/token'], ['GET', '/oauth/register']]) {
      const res = await loopbackFetch(`${origin}${path}`, { method, headers: { origin: SPA } });
      assertRouteNotFound(res, await res.text(), `${method} ${path}`);
    }
  });

  test('what oidc-provider has no route for (POST /oauth/authorize, an OPTIONS that is no preflight) is the same problem document', async () => {
    for (const [method, path, headers] of [['POST', '/oauth/authorize', { 'content-type': 'application/x-www-form-urlencoded' }], ['OPTIONS', '/oauth/token', {}], ['OPTIONS', '/.well-known/oauth-authorization-server', {}]] as const) {
      const res = await loopbackFetch(`${origin}${path}`, { method, headers, ...(method === 'POST' ? { body: 'client_id=x' } : {}) });
      assertRouteNotFound(res, await res.text(), `${method} ${path}`);
    }
  });

  test('no OAuth endpoint answers any method, with or without an Origin, in plain text', async () => {
    for (const [path] of endpoints) {
      for (const method of ['GET', 'POST', 'OPTIONS']) {
        for (const headers of [{}, { origin: SPA, 'access-control-request-method': 'POST' }] as Array<Record<string, string>>) {
          const res = await loopbackFetch(`${origin}${path.replace(':uid', 'unknown')}`, { method, headers });
          assert.doesNotMatch(res.headers.get('content-type') ?? '', /^text\/plain/, `${method} ${path}: ${res.status}`);
        }
      }
    }
  });
});
