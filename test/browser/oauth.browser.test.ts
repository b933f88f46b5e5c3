// The authorization code flow in Chromium (docs/authentication.md#oauth-2), as a person meets it: the application sends the
// browser to /oauth/authorize, the person signs in on our page, sees the consent page (with the privileged
// warning), chooses Allow or Deny, and lands on the application's loopback callback, served here, with the code
// and the state. The code is then exchanged by oauth4webapi. With response_mode=form_post the code arrives by a
// POST from oidc-provider's own page, whose inline script our Content-Security-Policy allows by its hash.
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oauth from 'oauth4webapi';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { Organisation } from '../../src/domain/organisations/organisations.repository.ts';
import { startTestApp, type TestContext } from '../support/harness.ts';
import { launchBrowser, newPage } from '../../testkit/browser.ts';
import { clientOptions, discover, pkce } from '../support/oauth.ts';

const PASSWORD = 'correct horse battery';

describe('OAuth authorization code flow in Chromium', () => {
  let t: TestContext;
  let browser: Browser;
  let context: BrowserContext | undefined;
  let callbackServer: http.Server;
  let callbackUrl: string;
  const callbacks: URL[] = [];
  let org: Organisation;
  let person: { id: string; email: string };
  let client: { client_id: string };
  let as: oauth.AuthorizationServer;

  before(async () => {
    t = await startTestApp();
    await t.listen();
    browser = await launchBrowser();
    // The application's own callback, on loopback, as a native app or a CLI would serve it.
    // A form_post answer arrives as a POST: its fields are recorded as the query of the URL, like a redirect's.
    callbackServer = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const url = new URL(req.url!, 'http://127.0.0.1');
        if (req.method === 'POST') url.search = body;
        if (url.pathname === '/callback') callbacks.push(url);
        res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Back in the app</title><h1>Back in the app</h1>');
      });
    });
    await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve));
    callbackUrl = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}/callback`;
    org = await t.make.org({ address: `oauth-ui-${Math.random().toString(36).slice(2, 8)}.localhost` });
    person = await t.make.person(org, { roles: ['admin'], password: PASSWORD, name: 'Ada Admin' });
    client = await t.app.services.oauthClients.create(org.id, person.id, { name: 'Gradebook sync', type: 'public', redirect_uris: [callbackUrl], grant_types: ['authorization_code'], scopes: ['courses:read', 'courses:write', 'audit:read', 'users:delete'] });
    as = await discover(t.originOf(org.address));
  });
  afterEach(async () => {
    await context?.close();
    context = undefined;
  });
  after(async () => {
    await browser?.close();
    await new Promise((resolve) => callbackServer.close(resolve));
    await t.close();
  });

  async function startFlow(scope: string, state: string, extra: Record<string, string> = {}): Promise<{ page: Page; verifier: string }> {
    const { verifier, challenge } = await pkce();
    const url = new URL(as.authorization_endpoint!);
    for (const [k, v] of Object.entries({ client_id: client.client_id, redirect_uri: callbackUrl, response_type: 'code', scope, state, code_challenge: challenge, code_challenge_method: 'S256', ...extra })) url.searchParams.set(k, v);
    if (!context) context = (await newPage(browser)).context;
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(url.toString());
    return { page, verifier };
  }

  async function signIn(page: Page) {
    await page.getByLabel('Email').fill(person.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  test('sign in, read the consent page (privileged scopes warned), Allow: back at the callback with code and state; the code buys a working token', async () => {
    const { page, verifier } = await startFlow('courses:read audit:read', 'state-allow');
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await signIn(page);
    await page.getByRole('heading', { name: 'Allow Gradebook sync to act as you?' }).waitFor();
    const items = page.getByRole('listitem');
    await items.filter({ hasText: 'courses:read' }).getByText('Read courses').waitFor();
    const privileged = items.filter({ hasText: 'audit:read' });
    assert.equal(await privileged.getAttribute('class'), 'privileged');
    await privileged.getByText('Privileged').waitFor();
    // What the person's roles let the application do under each scope, in the capability catalogue's sentences.
    await items.filter({ hasText: 'courses:read' }).getByRole('listitem').filter({ hasText: 'See courses, their sections and activities, including hidden ones.' }).waitFor();
    await privileged.getByRole('listitem').filter({ hasText: 'Read the audit log: who changed what, when, with which credential.' }).waitFor();
    assert.equal(await privileged.getByRole('listitem').count(), 1, 'audit:read exercises one capability');
    assert.equal(await items.filter({ hasText: 'courses:read' }).getAttribute('class'), null);
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.getByRole('heading', { name: 'Back in the app' }).waitFor();
    const callback = callbacks.at(-1)!;
    assert.equal(callback.searchParams.get('state'), 'state-allow');
    const params = oauth.validateAuthResponse(as, { client_id: client.client_id }, callback, 'state-allow');
    const response = await oauth.authorizationCodeGrantRequest(as, { client_id: client.client_id }, oauth.None(), params, callbackUrl, verifier, clientOptions);
    const tokens = await oauth.processAuthorizationCodeResponse(as, { client_id: client.client_id }, response);
    const me = await t.api.request({ host: org.address, key: tokens.access_token, path: '/me' });
    assert.equal(me.status, 200);
    assert.deepEqual(me.body.scopes, ['audit:read', 'courses:read']);

    // Consent is remembered for these scopes: the same request goes straight back to the application.
    const before = callbacks.length;
    const again = await startFlow('courses:read audit:read', 'state-again');
    await again.page.getByRole('heading', { name: 'Back in the app' }).waitFor();
    assert.equal(callbacks.length, before + 1);
    assert.equal(callbacks.at(-1)!.searchParams.get('state'), 'state-again');
    assert.ok(callbacks.at(-1)!.searchParams.get('code'));
  });

  /** A form_post flow up to the page that posts the code; the CSP it came with. */
  async function formPostFlow(javaScript: boolean, state: string) {
    context = (await newPage(browser, { javaScript })).context;
    const violations: string[] = [];
    context.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    const { page, verifier } = await startFlow('courses:write', state, { response_mode: 'form_post' });
    const formPost = page.waitForResponse((response) => response.url().includes('/oauth/authorize/') && response.status() === 200);
    await signIn(page);
    // The consent page, unless these scopes were allowed before (consent is remembered).
    const allow = page.getByRole('button', { name: 'Allow' });
    if ((await Promise.race([allow.waitFor().then(() => 'consent'), formPost.then(() => 'posting')])) === 'consent') await allow.click();
    return { page, verifier, violations, csp: (await formPost).headers()['content-security-policy'] };
  }

  async function assertCodeArrivedByPost(state: string, verifier: string) {
    const callback = callbacks.at(-1)!;
    assert.equal(callback.searchParams.get('state'), state);
    const params = oauth.validateAuthResponse(as, { client_id: client.client_id }, callback, state);
    const response = await oauth.authorizationCodeGrantRequest(as, { client_id: client.client_id }, oauth.None(), params, callbackUrl, verifier, clientOptions);
    const tokens = await oauth.processAuthorizationCodeResponse(as, { client_id: client.client_id }, response);
    assert.match(tokens.access_token, /^atr_at_/);
  }

  test('response_mode=form_post: the page posting the code runs its one script under our CSP (allowed by its hash); the code arrives by POST', async () => {
    const { page, verifier, violations, csp } = await formPostFlow(true, 'state-post');
    assert.match(csp, /script-src 'self' 'sha256-[A-Za-z0-9+/]+=*'(;|$)/);
    assert.match(csp, /frame-ancestors 'none'/);
    await page.getByRole('heading', { name: 'Back in the app' }).waitFor();
    assert.deepEqual(violations, []);
    await assertCodeArrivedByPost('state-post', verifier);
  });

  test('response_mode=form_post without JavaScript: the page offers a Continue button that posts the code', async () => {
    const { page, verifier } = await formPostFlow(false, 'state-post-nojs');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('heading', { name: 'Back in the app' }).waitFor();
    await assertCodeArrivedByPost('state-post-nojs', verifier);
  });

  test('Deny: back at the callback with error=access_denied and the state, no code', async () => {
    const { page } = await startFlow('courses:write users:delete', 'state-deny');
    await signIn(page);
    await page.getByRole('listitem').filter({ hasText: 'users:delete' }).getByText('Privileged').waitFor();
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.getByRole('heading', { name: 'Back in the app' }).waitFor();
    const callback = callbacks.at(-1)!;
    assert.equal(callback.searchParams.get('error'), 'access_denied');
    assert.equal(callback.searchParams.get('state'), 'state-deny');
    assert.equal(callback.searchParams.get('code'), null);
  });

  test('a redirect URI that is not registered: an error page in the browser, never a redirect', async () => {
    const { challenge } = await pkce();
    const url = new URL(as.authorization_endpoint!);
    for (const [k, v] of Object.entries({ client_id: client.client_id, redirect_uri: 'https://evil.example/steal', response_type: 'code', scope: 'courses:read', state: 's', code_challenge: challenge, code_challenge_method: 'S256' })) url.searchParams.set(k, v);
    context = (await newPage(browser)).context;
    const page = await context.newPage();
    const response = await page.goto(url.toString());
    assert.equal(response!.status(), 400);
    assert.equal(new URL(page.url()).host, new URL(as.issuer).host);
    await page.getByRole('heading', { name: 'The sign-in request cannot go on' }).waitFor();
  });
});
