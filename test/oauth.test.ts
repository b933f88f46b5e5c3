// OAuth 2 (docs/authentication.md#oauth-2) through oauth4webapi, a client library nobody here wrote, against the app listening
// on loopback: discovery, client credentials, the authorization code flow with PKCE (driven through our sign-in
// and consent pages by a cookie-keeping client; Chromium drives it in test/browser/oauth.browser.test.ts),
// refresh-token rotation and reuse, revocation, introspection, self-registration, and every refusal the issue
// lists, each as the RFC error it should be and granting nothing.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import type { Organisation } from '../src/domain/organisations/organisations.repository.ts';
import { hashClientSecret } from '../src/auth/oauth/clients.service.ts';
import { startTestApp, type TestContext } from './support/harness.ts';
import { clientOptions, createFlowBrowser, discover, loopbackFetch, pkce } from './support/oauth.ts';

const PASSWORD = 'correct horse battery';
const CALLBACK = 'http://127.0.0.1:9/callback';

describe('OAuth 2 authorization server', () => {
  let t: TestContext;
  let org: Organisation;
  let origin: string;
  let as: oauth.AuthorizationServer;
  let person: { id: string; email: string };
  let app: { client_id: string };
  let machine: { client_id: string; client_secret: string };

  before(async () => {
    t = await startTestApp();
    await t.listen();
    org = await t.make.org({ address: `oauth-${Math.random().toString(36).slice(2, 8)}.localhost` });
    origin = t.originOf(org.address);
    person = await t.make.person(org, { roles: ['admin'], password: PASSWORD, name: 'Ada Admin' });
    app = await t.app.services.oauthClients.create(org.id, person.id, { name: 'Timetable app', type: 'public', redirect_uris: [CALLBACK], grant_types: ['authorization_code'], scopes: ['courses:read', 'courses:write', 'audit:read'] });
    machine = (await t.app.services.oauthClients.create(org.id, person.id, { name: 'Nightly sync', type: 'confidential', redirect_uris: [], grant_types: ['client_credentials'], scopes: ['courses:read', 'enrolments:read'], service_person_id: person.id })) as typeof machine;
    as = await discover(origin);
  });
  after(() => t.close());

  const rest = (token: string, path = '/me', init: { method?: string; body?: unknown; host?: string } = {}) =>
    t.api.request({ method: (init.method ?? 'GET') as 'GET', path, host: init.host ?? org.address, key: token, ...(init.body !== undefined ? { body: init.body } : {}) });

  const tokenRequest = (form: Record<string, string>, basic?: [string, string]) =>
    loopbackFetch(as.token_endpoint!, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(basic ? { authorization: `Basic ${Buffer.from(`${basic[0]}:${basic[1]}`).toString('base64')}` } : {}) },
      body: new URLSearchParams(form).toString(),
    });

  /** Runs the authorization request through sign-in and consent; the callback URL it ends at. */
  async function authorize(opts: { scope?: string; state?: string; challenge?: string; method?: string; resource?: string; clientId?: string; redirectUri?: string; responseMode?: string; decision?: 'allow' | 'deny'; browser?: ReturnType<typeof createFlowBrowser> } = {}) {
    const browser = opts.browser ?? createFlowBrowser(t, origin);
    if (!opts.browser) await browser.signIn(person.email, PASSWORD);
    const url = new URL(as.authorization_endpoint!);
    url.searchParams.set('client_id', opts.clientId ?? app.client_id);
    url.searchParams.set('redirect_uri', opts.redirectUri ?? CALLBACK);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('scope', opts.scope ?? 'courses:read courses:write');
    url.searchParams.set('state', opts.state ?? 'st-1');
    if (opts.challenge !== undefined) url.searchParams.set('code_challenge', opts.challenge);
    if (opts.challenge !== undefined) url.searchParams.set('code_challenge_method', opts.method ?? 'S256');
    if (opts.resource) url.searchParams.set('resource', opts.resource);
    if (opts.responseMode) url.searchParams.set('response_mode', opts.responseMode);
    let res = await browser.go(url.toString());
    if (res.status === 200 && res.html.includes('name="decision"')) res = await browser.decide(res.html, opts.decision ?? 'allow');
    return { res, browser, callback: res.location ? new URL(res.location, origin) : undefined };
  }

  async function codeFlowTokens(scope = 'courses:read courses:write', resource?: string) {
    const { verifier, challenge } = await pkce();
    const { callback } = await authorize({ scope, challenge, resource });
    const params = oauth.validateAuthResponse(as, { client_id: app.client_id }, callback!, 'st-1');
    const response = await oauth.authorizationCodeGrantRequest(as, { client_id: app.client_id }, oauth.None(), params, CALLBACK, verifier, { ...clientOptions, ...(resource ? { additionalParameters: { resource } } : {}) });
    return oauth.processAuthorizationCodeResponse(as, { client_id: app.client_id }, response);
  }

  describe('metadata (RFC 8414)', () => {
    test('/.well-known/oauth-authorization-server names the organisation’s public origin and our endpoints', async () => {
      assert.equal(as.issuer, origin);
      for (const [key, path] of [['authorization_endpoint', '/oauth/authorize'], ['token_endpoint', '/oauth/token'], ['revocation_endpoint', '/oauth/revoke'], ['introspection_endpoint', '/oauth/introspect'], ['registration_endpoint', '/oauth/register']] as const) {
        assert.equal(as[key], `${origin}${path}`, key);
      }
      assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
      assert.ok((as.scopes_supported as string[]).includes('courses:read'));
      assert.deepEqual(as.token_endpoint_auth_methods_supported, ['client_secret_basic', 'client_secret_post', 'none']);
      const oidc = await (await loopbackFetch(`${origin}/.well-known/openid-configuration`)).json() as any;
      assert.equal(oidc.issuer, origin);
    });

    test('the metadata and the token endpoint answer CORS requests from any origin, without cookies', async () => {
      const res = await loopbackFetch(`${origin}/.well-known/oauth-authorization-server`, { headers: { origin: 'https://spa.example' } });
      assert.match(res.headers.get('access-control-allow-origin') ?? '', /^(\*|https:\/\/spa\.example)$/);
      const preflight = await loopbackFetch(as.token_endpoint!, { method: 'OPTIONS', headers: { origin: 'https://spa.example', 'access-control-request-method': 'POST' } });
      assert.ok(preflight.status < 300);
      assert.match(preflight.headers.get('access-control-allow-origin') ?? '', /^(\*|https:\/\/spa\.example)$/);
      assert.notEqual(preflight.headers.get('access-control-allow-credentials'), 'true');
    });
  });

  describe('client credentials', () => {
    test('a confidential client gets an atr_at_ token acting as its service person, with its registered scopes by default', async () => {
      const response = await oauth.clientCredentialsGrantRequest(as, { client_id: machine.client_id }, oauth.ClientSecretBasic(machine.client_secret), new URLSearchParams(), clientOptions);
      const token = await oauth.processClientCredentialsResponse(as, { client_id: machine.client_id }, response);
      assert.match(token.access_token, /^atr_at_/);
      assert.equal(token.expires_in, 3600);
      const me = await rest(token.access_token);
      assert.equal(me.status, 200);
      assert.equal(me.body.credential.kind, 'oauth_token');
      assert.equal(me.body.subject.person_id, person.id);
      assert.deepEqual(me.body.scopes, ['courses:read', 'enrolments:read']);
    });

    test('the secret in the body (client_secret_post) works too; the secret is stored only as its SHA-256', async () => {
      const res = await tokenRequest({ grant_type: 'client_credentials', client_id: machine.client_id, client_secret: machine.client_secret, scope: 'courses:read' });
      assert.equal(res.status, 200);
      assert.equal((await res.json() as any).scope, 'courses:read');
      const row = await t.database.db.selectFrom('oauth_clients').selectAll().where('client_id', '=', machine.client_id).executeTakeFirstOrThrow();
      assert.equal(row.secret_hash, hashClientSecret(machine.client_secret));
      assert.ok(!JSON.stringify(row).includes(machine.client_secret.slice(7)));
    });

    test('no token value is stored: tokens are found by their hash', async () => {
      const res = await tokenRequest({ grant_type: 'client_credentials' }, [machine.client_id, machine.client_secret]);
      const token = (await res.json() as any).access_token as string;
      const records = await t.database.db.selectFrom('oauth_records').selectAll().where('organisation_id', '=', org.id).execute();
      const value = token.slice('atr_at_'.length);
      assert.ok(records.length > 0);
      assert.ok(!records.some((r) => JSON.stringify(r).includes(value)), 'the value appears in no column');
    });

    test('refusals: unknown client and wrong secret (invalid_client), a scope outside the client’s (invalid_scope), an unsupported grant', async () => {
      const cases: Array<[Record<string, string>, [string, string] | undefined, number, string]> = [
        [{ grant_type: 'client_credentials' }, ['atr_ci_nobody', 'x'], 401, 'invalid_client'],
        [{ grant_type: 'client_credentials' }, [machine.client_id, 'atr_cs_wrong'], 401, 'invalid_client'],
        [{ grant_type: 'client_credentials', client_id: machine.client_id, client_secret: 'wrong' }, undefined, 401, 'invalid_client'],
        [{ grant_type: 'client_credentials', scope: 'courses:write' }, [machine.client_id, machine.client_secret], 400, 'invalid_scope'],
        [{ grant_type: 'client_credentials', scope: 'courses:fly' }, [machine.client_id, machine.client_secret], 400, 'invalid_scope'],
        [{ grant_type: 'password', username: person.email, password: PASSWORD }, [machine.client_id, machine.client_secret], 400, 'unsupported_grant_type'],
        [{ grant_type: 'client_credentials', client_id: app.client_id }, undefined, 400, 'unauthorized_client'],
        [{ grant_type: 'client_credentials', client_id: 'atr_ci_\u0000nul', client_secret: 'x' }, undefined, 401, 'invalid_client'],
      ];
      for (const [form, basic, status, error] of cases) {
        const res = await tokenRequest(form, basic);
        const body = ((await res.json()) as any) as any;
        assert.equal(res.status, status, `${JSON.stringify(form)} → ${JSON.stringify(body)}`);
        assert.equal(body.error, error);
        assert.equal(typeof body.error_description, 'string');
        assert.equal(body.access_token, undefined);
      }
    });
  });

  describe('authorization code with PKCE', () => {
    test('sign-in, consent, code and state back at the callback; the token acts as the person, scope ∩ what they may do', async () => {
      const tokens = await codeFlowTokens();
      assert.match(tokens.access_token, /^atr_at_/);
      assert.ok(tokens.refresh_token, 'a refresh token comes with the code');
      const me = await rest(tokens.access_token);
      assert.equal(me.status, 200);
      assert.equal(me.body.subject.person_id, person.id);
      assert.deepEqual(me.body.scopes, ['courses:read', 'courses:write']);
      const created = await rest(tokens.access_token, '/courses', { method: 'POST', body: { fullname: 'By token', shortname: `TOK-${Math.random()}` } });
      assert.equal(created.status, 201);
    });

    test('a person signed out of Atrium is asked to sign in again, even if the authorization server remembers them', async () => {
      const first = await authorize({ challenge: (await pkce()).challenge });
      assert.ok(first.callback);
      await first.browser.request('POST', '/logout', { _csrf: /name="_csrf" value="([^"]+)"/.exec((await first.browser.request('GET', '/admin')).html)?.[1] ?? '' });
      const url = new URL(as.authorization_endpoint!);
      for (const [k, v] of Object.entries({ client_id: app.client_id, redirect_uri: CALLBACK, response_type: 'code', scope: 'courses:read', state: 's', code_challenge: (await pkce()).challenge, code_challenge_method: 'S256' })) url.searchParams.set(k, v);
      const again = await first.browser.go(url.toString());
      assert.equal(again.status, 200);
      assert.match(again.html, /<h1>Sign in<\/h1>/);
    });

    test('consent is remembered per (person, client, scopes): the same scopes again skip the page, a new scope asks again', async () => {
      const browser = createFlowBrowser(t, origin);
      await browser.signIn(person.email, PASSWORD);
      const remembered = await authorize({ browser, scope: 'courses:read', challenge: (await pkce()).challenge });
      assert.ok(remembered.callback?.searchParams.get('code'));
      const url = new URL(as.authorization_endpoint!);
      for (const [k, v] of Object.entries({ client_id: app.client_id, redirect_uri: CALLBACK, response_type: 'code', scope: 'courses:read', state: 's2', code_challenge: (await pkce()).challenge, code_challenge_method: 'S256' })) url.searchParams.set(k, v);
      const skipped = await browser.go(url.toString());
      assert.equal(new URL(skipped.location!).searchParams.get('state'), 's2', 'straight back to the callback');
      url.searchParams.set('scope', 'courses:read audit:read');
      const asked = await browser.go(url.toString());
      assert.equal(asked.status, 200);
      assert.match(asked.html, /<li class="privileged">\s*<code>audit:read<\/code>/);
      assert.match(asked.html, /<strong>Privileged:<\/strong>/);
      assert.doesNotMatch(asked.html, /<code>courses:read<\/code>/, 'only what was not granted yet is asked');
    });

    test('the consent page says, per scope, what the person’s roles would let the application do, in the catalogue’s sentences', async () => {
      /** The consent page `who` is shown for `scope`; each scope's item, by its scope. */
      async function consentItems(who: { email: string }, scope: string) {
        const browser = createFlowBrowser(t, origin);
        await browser.signIn(who.email, PASSWORD);
        const url = new URL(as.authorization_endpoint!);
        for (const [k, v] of Object.entries({ client_id: app.client_id, redirect_uri: CALLBACK, response_type: 'code', scope, state: 's', code_challenge: (await pkce()).challenge, code_challenge_method: 'S256' })) url.searchParams.set(k, v);
        const res = await browser.go(url.toString());
        assert.equal(res.status, 200);
        assert.match(res.html, /name="decision"/, 'the consent page');
        const list = /<ul class="scopes">([\s\S]*?)\n<\/ul>/.exec(res.html)?.[1] ?? '';
        const items = new Map<string, string>();
        for (const item of list.split(/\n  <li/).slice(1)) items.set(/<code>([^<]+)<\/code>/.exec(item)![1], item);
        return items;
      }
      const sentences = (item: string) => [...(/<ul class="allows">([\s\S]*?)<\/ul>/.exec(item)?.[1] ?? '').matchAll(/<li>([^<]*)<\/li>/g)].map((m) => m[1]);

      // An administrator: everything the scopes would exercise.
      const admin = await t.make.person(org, { roles: ['admin'], password: PASSWORD });
      const asAdmin = await consentItems(admin, 'courses:write audit:read');
      assert.deepEqual([...asAdmin.keys()].sort(), ['audit:read', 'courses:write']);
      const adminWrites = sentences(asAdmin.get('courses:write')!);
      assert.ok(adminWrites.includes('Create courses and course categories.'), adminWrites.join(' | '));
      assert.ok(adminWrites.includes('Change courses, their sections and activities.'));
      assert.ok(adminWrites.includes('Restore an earlier version of a wiki page.'));
      assert.ok(!adminWrites.includes('Read the audit log: who changed what, when, with which credential.'), 'only what this scope exercises');
      assert.deepEqual(sentences(asAdmin.get('audit:read')!), ['Read the audit log: who changed what, when, with which credential.']);
      assert.match(asAdmin.get('audit:read')!, /<strong>Privileged:<\/strong> It can read everything anyone did/, 'the privileged warning still shows');

      // A teacher: the same scopes allow only what a teacher may do; the audit log, nothing, though still warned of.
      const teacher = await t.make.person(org, { roles: ['teacher'], password: PASSWORD });
      const asTeacher = await consentItems(teacher, 'courses:write audit:read');
      const teacherWrites = sentences(asTeacher.get('courses:write')!);
      assert.ok(teacherWrites.includes('Change courses, their sections and activities.'), teacherWrites.join(' | '));
      assert.ok(!teacherWrites.includes('Create courses and course categories.'), 'a teacher may not create courses');
      assert.deepEqual(sentences(asTeacher.get('audit:read')!), []);
      assert.match(asTeacher.get('audit:read')!, /Your roles allow none of this/);
      assert.match(asTeacher.get('audit:read')!, /<strong>Privileged:<\/strong>/);
      // The sentences are escaped like any text of the page (the catalogue's apostrophes stay as they are).
      assert.doesNotMatch(asAdmin.get('courses:write')!, /<li>[^<]*[<>"][^<]*<\/li>/);
    });

    test('Deny: back to the callback with error=access_denied and the state; no code', async () => {
      const { callback } = await authorize({ challenge: (await pkce()).challenge, decision: 'deny', state: 'st-deny', scope: 'courses:write audit:read' });
      assert.equal(callback!.searchParams.get('error'), 'access_denied');
      assert.equal(callback!.searchParams.get('state'), 'st-deny');
      assert.equal(callback!.searchParams.get('code'), null);
    });

    test('PKCE is required, and only S256: missing or plain is refused at the callback (invalid_request)', async () => {
      for (const opts of [{}, { challenge: 'a'.repeat(43), method: 'plain' }]) {
        const { callback } = await authorize({ ...opts, state: 'st-pkce' });
        assert.equal(callback!.searchParams.get('error'), 'invalid_request', JSON.stringify(opts));
        assert.equal(callback!.searchParams.get('code'), null);
      }
    });

    test('a redirect URI that is not registered: an error page, never a redirect to it', async () => {
      const { res } = await authorize({ challenge: (await pkce()).challenge, redirectUri: 'https://evil.example/steal' });
      assert.equal(res.status, 400);
      assert.equal(res.location, undefined);
      assert.match(res.html, /redirect_uri/);
      assert.match(res.html, /The sign-in request cannot go on/);
    });

    test('an unknown client: an error page, no redirect', async () => {
      const { res } = await authorize({ challenge: (await pkce()).challenge, clientId: 'atr_ci_nobody' });
      assert.equal(res.status, 400);
      assert.equal(res.location, undefined);
      assert.match(res.html, /invalid_client/);
    });

    /** The headers every HTML answer carries, as the admin pages do; the CSP's script-src, split. */
    function assertPageHeaders(headers: Headers, what: string): string[] {
      const csp = headers.get('content-security-policy') ?? '';
      assert.match(csp, /frame-ancestors 'none'/, what);
      assert.match(csp, /default-src 'self'/, what);
      assert.doesNotMatch(csp, /unsafe-inline/, what);
      assert.equal(headers.get('x-content-type-options'), 'nosniff', what);
      assert.equal(headers.get('referrer-policy'), 'same-origin', what);
      assert.equal(headers.get('cache-control'), 'no-store', what);
      return /script-src ([^;]*)/.exec(csp)?.[1].trim().split(/\s+/) ?? [];
    }

    test('the error pages oidc-provider renders itself carry the pages’ security headers', async () => {
      const unknownClient = await authorize({ challenge: (await pkce()).challenge, clientId: 'atr_ci_nobody' });
      const badRedirect = await authorize({ challenge: (await pkce()).challenge, redirectUri: 'https://evil.example/steal' });
      const noParameters = await createFlowBrowser(t, origin).go(`${origin}/oauth/authorize`);
      for (const [what, res] of [['unknown client', unknownClient.res], ['unregistered redirect_uri', badRedirect.res], ['no parameters', noParameters]] as const) {
        assert.equal(res.status, 400, what);
        assert.match(res.headers.get('content-type') ?? '', /^text\/html/, what);
        assert.deepEqual(assertPageHeaders(res.headers, what), ["'self'"], `${what}: no inline script allowed`);
      }
    });

    test('response_mode=form_post: the page posting the code carries the pages’ headers, its one inline script allowed by its hash', async () => {
      const { verifier, challenge } = await pkce();
      const { res } = await authorize({ challenge, responseMode: 'form_post', state: 'st-post' });
      assert.equal(res.status, 200);
      assert.match(res.html, new RegExp(`<form method="post" action="${CALLBACK}"`));
      const scripts = [...res.html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]);
      assert.equal(scripts.length, 1);
      const hash = `'sha256-${createHash('sha256').update(scripts[0]).digest('base64')}'`;
      assert.deepEqual(assertPageHeaders(res.headers, 'form_post'), ["'self'", hash], 'exactly the page’s own script');
      // The code it posts works like one from a redirect.
      const code = /name="code" value="([^"]+)"/.exec(res.html)![1];
      assert.match(res.html, /name="state" value="st-post"/);
      const exchanged = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK, code_verifier: verifier, client_id: app.client_id });
      assert.equal(exchanged.status, 200);
    });

    test('a scope outside the client’s: invalid_scope at the callback', async () => {
      const { callback } = await authorize({ challenge: (await pkce()).challenge, scope: 'courses:read users:delete' });
      assert.equal(callback!.searchParams.get('error'), 'invalid_scope');
    });

    test('wrong verifier, reused code, expired code: invalid_grant; a reused code also revokes what it gave', async () => {
      const exchange = async (callback: URL, verifier: string) =>
        tokenRequest({ grant_type: 'authorization_code', code: callback.searchParams.get('code')!, redirect_uri: CALLBACK, code_verifier: verifier, client_id: app.client_id });

      const p1 = await pkce();
      const one = await authorize({ challenge: p1.challenge });
      const wrong = await exchange(one.callback!, (await pkce()).verifier);
      assert.equal(wrong.status, 400);
      assert.equal(((await wrong.json()) as any).error, 'invalid_grant');

      const p2 = await pkce();
      const two = await authorize({ challenge: p2.challenge });
      const first = await exchange(two.callback!, p2.verifier);
      assert.equal(first.status, 200);
      const token = ((await first.json()) as any).access_token;
      assert.equal((await rest(token)).status, 200);
      const reused = await exchange(two.callback!, p2.verifier);
      assert.equal(reused.status, 400);
      assert.equal(((await reused.json()) as any).error, 'invalid_grant');
      assert.equal((await rest(token)).status, 401, 'the token the code gave is revoked');

      const p3 = await pkce();
      const three = await authorize({ challenge: p3.challenge });
      // Codes live 60 seconds: make this one old.
      await t.database.db.updateTable('oauth_records').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('model', '=', 'AuthorizationCode').where('organisation_id', '=', org.id).execute();
      const expired = await exchange(three.callback!, p3.verifier);
      assert.equal(expired.status, 400);
      assert.equal(((await expired.json()) as any).error, 'invalid_grant');
    });

    test('refresh tokens rotate; a reused one is refused and revokes the whole family', async () => {
      const tokens = await codeFlowTokens('courses:read');
      const refresh1 = tokens.refresh_token!;
      const r1 = await oauth.processRefreshTokenResponse(as, { client_id: app.client_id }, await oauth.refreshTokenGrantRequest(as, { client_id: app.client_id }, oauth.None(), refresh1, clientOptions));
      assert.notEqual(r1.refresh_token, refresh1, 'rotated');
      assert.equal((await rest(r1.access_token)).status, 200);
      const reuse = await tokenRequest({ grant_type: 'refresh_token', refresh_token: refresh1, client_id: app.client_id });
      assert.equal(reuse.status, 400);
      assert.equal(((await reuse.json()) as any).error, 'invalid_grant');
      assert.equal((await rest(r1.access_token)).status, 401, 'the family’s access token is revoked');
      const next = await tokenRequest({ grant_type: 'refresh_token', refresh_token: r1.refresh_token!, client_id: app.client_id });
      assert.equal(next.status, 400, 'and its newest refresh token');
    });
  });

  describe('revocation (RFC 7009) and introspection (RFC 7662)', () => {
    test('a revoked access token is refused on its very next REST request', async () => {
      const tokens = await codeFlowTokens('courses:read');
      assert.equal((await rest(tokens.access_token)).status, 200);
      const res = await oauth.revocationRequest(as, { client_id: app.client_id }, oauth.None(), tokens.access_token, clientOptions);
      await oauth.processRevocationResponse(res);
      const refused = await rest(tokens.access_token);
      assert.equal(refused.status, 401);
      assert.equal(refused.body.code, 'auth.invalid_credential');
    });

    test('a client revokes only its own tokens: another client’s is refused (RFC 7009 2.1, invalid_request) and still works afterwards', async () => {
      const machineToken = ((await (await tokenRequest({ grant_type: 'client_credentials' }, [machine.client_id, machine.client_secret])).json()) as any).access_token as string;
      const appTokens = await codeFlowTokens('courses:read');
      const revoke = (token: string, client: Record<string, string>, basic?: [string, string]) =>
        loopbackFetch(as.revocation_endpoint!, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', ...(basic ? { authorization: `Basic ${Buffer.from(`${basic[0]}:${basic[1]}`).toString('base64')}` } : {}) },
          body: new URLSearchParams({ token, ...client }).toString(),
        });
      for (const [what, res] of [
        ['a public client presenting a confidential client’s token', await revoke(machineToken, { client_id: app.client_id })],
        ['a confidential client presenting a public client’s token', await revoke(appTokens.access_token, {}, [machine.client_id, machine.client_secret])],
        ['a confidential client presenting a public client’s refresh token', await revoke(appTokens.refresh_token!, {}, [machine.client_id, machine.client_secret])],
      ] as const) {
        assert.equal(res.status, 400, what);
        assert.equal(((await res.json()) as any).error, 'invalid_request', what);
      }
      assert.equal((await rest(machineToken)).status, 200, 'the confidential client’s token still works');
      assert.equal((await rest(appTokens.access_token)).status, 200, 'the public client’s token still works');
      const refreshed = await oauth.refreshTokenGrantRequest(as, { client_id: app.client_id }, oauth.None(), appTokens.refresh_token!, clientOptions);
      assert.equal(refreshed.status, 200, 'and so does its refresh token');
      // Its own token, each client may revoke.
      assert.equal((await revoke(machineToken, {}, [machine.client_id, machine.client_secret])).status, 200);
      assert.equal((await rest(machineToken)).status, 401);
    });

    test('introspection answers confidential clients of the organisation; a public client is refused', async () => {
      const cc = (await (await tokenRequest({ grant_type: 'client_credentials' }, [machine.client_id, machine.client_secret])).json()) as any;
      const response = await oauth.introspectionRequest(as, { client_id: machine.client_id }, oauth.ClientSecretBasic(machine.client_secret), cc.access_token, clientOptions);
      const info = await oauth.processIntrospectionResponse(as, { client_id: machine.client_id }, response);
      assert.equal(info.active, true);
      assert.equal(info.scope, 'courses:read enrolments:read');
      assert.equal(info.client_id, machine.client_id);
      const bogus = await oauth.processIntrospectionResponse(as, { client_id: machine.client_id }, await oauth.introspectionRequest(as, { client_id: machine.client_id }, oauth.ClientSecretBasic(machine.client_secret), 'atr_at_nothing', clientOptions));
      assert.equal(bogus.active, false);
      // A public client proves nothing about itself: it learns nothing about a token (RFC 7662 2.2).
      const byPublic = await loopbackFetch(as.introspection_endpoint!, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: cc.access_token, client_id: app.client_id }).toString() });
      assert.deepEqual(await byPublic.json(), { active: false });
    });
  });

  describe('tokens on the REST API', () => {
    test('a token of one organisation is a 401 problem document at another’s address', async () => {
      const tokens = await codeFlowTokens('courses:read');
      const other = await t.make.org();
      const res = await rest(tokens.access_token, '/me', { host: other.address });
      assert.equal(res.status, 401);
      assert.equal(res.body.code, 'auth.invalid_credential');
      assert.match(String(res.headers['content-type']), /application\/problem\+json/);
    });

    test('a token for {origin}/mcp is refused on the REST API (RFC 8707 audience)', async () => {
      const tokens = await codeFlowTokens('courses:read', `${origin}/mcp`);
      const res = await rest(tokens.access_token);
      assert.equal(res.status, 401);
      assert.match(res.body.detail, /another resource/);
      const bad = await tokenRequest({ grant_type: 'client_credentials', resource: 'https://elsewhere.example/api' }, [machine.client_id, machine.client_secret]);
      assert.equal(bad.status, 400);
      assert.equal(((await bad.json()) as any).error, 'invalid_target');
    });

    test('deleting the client or removing the person takes effect at once', async () => {
      const owner = await t.make.person(org, { roles: ['admin'], password: PASSWORD });
      const ccClient = (await t.app.services.oauthClients.create(org.id, null, { name: 'Temp', type: 'confidential', redirect_uris: [], grant_types: ['client_credentials'], scopes: ['courses:read'], service_person_id: owner.id })) as typeof machine;
      const token = ((await (await tokenRequest({ grant_type: 'client_credentials' }, [ccClient.client_id, ccClient.client_secret])).json()) as any).access_token;
      assert.equal((await rest(token)).status, 200);
      await t.app.services.people.remove(org.id, owner.id);
      assert.equal((await rest(token)).status, 401, 'the person is gone');
      const keep = (await t.app.services.oauthClients.create(org.id, null, { name: 'Temp 2', type: 'confidential', redirect_uris: [], grant_types: ['client_credentials'], scopes: ['courses:read'], service_person_id: person.id })) as typeof machine;
      const token2 = ((await (await tokenRequest({ grant_type: 'client_credentials' }, [keep.client_id, keep.client_secret])).json()) as any).access_token;
      assert.equal((await rest(token2)).status, 200);
      const row = await t.database.db.selectFrom('oauth_clients').select('id').where('client_id', '=', keep.client_id).executeTakeFirstOrThrow();
      await t.app.services.oauthClients.remove(org.id, row.id);
      assert.equal((await rest(token2)).status, 401, 'the client is gone');
    });

    test('without the API entitlement a token still reads, and every write is a 412', async () => {
      const noApi = await t.make.org({ address: `noapi-${Math.random().toString(36).slice(2, 8)}.localhost` });
      const p = await t.make.person(noApi, { roles: ['admin'] });
      const c = (await t.app.services.oauthClients.create(noApi.id, null, { name: 'Export', type: 'confidential', redirect_uris: [], grant_types: ['client_credentials'], scopes: ['courses:read', 'courses:write'], service_person_id: p.id })) as typeof machine;
      await t.app.services.organisations.update(noApi.address, { plan: 'no-api' });
      const noApiAs = await discover(t.originOf(noApi.address));
      const res = await loopbackFetch(noApiAs.token_endpoint!, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${c.client_id}:${c.client_secret}`).toString('base64')}` }, body: 'grant_type=client_credentials' });
      const token = (await res.json() as any).access_token;
      assert.equal((await rest(token, '/courses', { host: noApi.address })).status, 200);
      const write = await rest(token, '/courses', { host: noApi.address, method: 'POST', body: { fullname: 'x', shortname: 'x' } });
      assert.equal(write.status, 412);
      assert.equal(write.body.code, 'commerce.plan_entitlement');
      await assert.rejects(t.app.services.oauthClients.create(noApi.id, null, { name: 'More', type: 'public', redirect_uris: [CALLBACK], grant_types: ['authorization_code'], scopes: ['courses:read'] }), /plan/);
    });
  });

  describe('self-registration (RFC 7591)', () => {
    test('a public client with loopback or https redirect URIs registers itself and is listed; anything else is refused', async () => {
      const response = await oauth.dynamicClientRegistrationRequest(as, { redirect_uris: ['http://127.0.0.1:33418/callback'], client_name: 'Some MCP client', token_endpoint_auth_method: 'none' }, clientOptions);
      const client = await oauth.processDynamicClientRegistrationResponse(response);
      assert.match(client.client_id, /^atr_ci_/);
      assert.equal(client.client_secret, undefined);
      const row = await t.database.db.selectFrom('oauth_clients').selectAll().where('client_id', '=', client.client_id).executeTakeFirstOrThrow();
      assert.deepEqual([row.name, row.type, Boolean(row.self_registered), JSON.parse(row.grant_types)], ['Some MCP client', 'public', true, ['authorization_code']]);
      const register = (metadata: unknown) => loopbackFetch(as.registration_endpoint!, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(metadata) });
      for (const [metadata, error] of [
        [{ redirect_uris: ['https://app.example/cb'], token_endpoint_auth_method: 'client_secret_basic' }, 'invalid_client_metadata'],
        [{ redirect_uris: ['https://app.example/cb'], grant_types: ['client_credentials'] }, 'invalid_client_metadata'],
        [{ redirect_uris: ['http://app.example/cb'] }, 'invalid_redirect_uri'],
        [{ redirect_uris: [] }, 'invalid_redirect_uri'],
        [{ redirect_uris: ['https://app.example/cb'], client_name: 'nul \u0000 name' }, 'invalid_client_metadata'],
      ] as const) {
        const res = await register(metadata);
        assert.equal(res.status, 400, JSON.stringify(metadata));
        assert.equal((await res.json() as any).error, error);
      }
    });

    test('where the organisation does not allow it: refused, nothing registered', async () => {
      const closed = await t.make.org({ address: `closed-${Math.random().toString(36).slice(2, 8)}.localhost` });
      await t.app.services.mcpSettings.save(closed.id, { enabled: true, allowSelfRegistration: false, toolsOn: [] });
      const res = await loopbackFetch(`${t.originOf(closed.address)}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: ['http://127.0.0.1:9/cb'] }) });
      assert.equal(res.status, 403);
      assert.equal((await res.json() as any).error, 'access_denied');
      assert.equal((await t.app.services.oauthClients.list(closed.id)).length, 0);
    });
  });

  describe('audit log', () => {
    const entriesOf = (action: string) =>
      t.database.db.selectFrom('audit_events').selectAll().where('organisation_id', '=', org.id).where('action', '=', action).orderBy('id').execute();

    test('a consent is recorded as the person’s, in the grant’s transaction; each access token issued, as its client’s', async () => {
      const [consentsBefore, tokensBefore] = [(await entriesOf('oauth.consent')).length, (await entriesOf('oauth.token')).length];
      // Someone who never consented to this client: the consent page is shown (a grant is remembered per person).
      const fresh = await t.make.person(org, { roles: ['admin'], password: PASSWORD });
      const browser = createFlowBrowser(t, origin);
      await browser.signIn(fresh.email, PASSWORD);
      const { verifier, challenge } = await pkce();
      const { callback } = await authorize({ browser, scope: 'courses:read', challenge });
      const params = oauth.validateAuthResponse(as, { client_id: app.client_id }, callback!, 'st-1');
      const tokens = await oauth.processAuthorizationCodeResponse(as, { client_id: app.client_id }, await oauth.authorizationCodeGrantRequest(as, { client_id: app.client_id }, oauth.None(), params, CALLBACK, verifier, clientOptions));
      const consents = await entriesOf('oauth.consent');
      assert.equal(consents.length, consentsBefore + 1, 'one consent entry more');
      const e = consents.at(-1)!;
      assert.deepEqual([e.actor_type, e.actor_id, e.via, e.credential_kind, e.target_type, e.target_id, e.outcome], ['user', fresh.id, 'oauth', 'session', 'oauth_client', app.client_id, 'success']);
      const issued = await entriesOf('oauth.token');
      assert.equal(issued.length, tokensBefore + 1, 'one token entry more');
      assert.deepEqual([issued.at(-1)!.actor_type, issued.at(-1)!.actor_id, issued.at(-1)!.target_id], ['client', app.client_id, fresh.id]);
      const text = JSON.stringify(await t.database.db.selectFrom('audit_events').selectAll().execute());
      assert.ok(!text.includes(tokens.access_token) && !text.includes(PASSWORD));
    });
  });
});
