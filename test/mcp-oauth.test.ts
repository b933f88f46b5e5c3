// OAuth Client ID Metadata Documents (docs/authentication.md#oauth-2: Client ID Metadata Documents), as an MCP client meets them: the SDK
// client names itself by an https URL, the authorization server fetches that document from a real HTTPS server
// through the webhook SSRF guard, shows its client_name on the consent page as the client's own claim, and keeps
// it (here: no second fetch). Refused while the organisation does not allow self-registration, when the
// document names another client_id, and for an address the guard refuses. Sign-in and consent are driven at the
// request level (the same pages run in Chromium in test/browser/mcp.browser.test.ts).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client, UnauthorizedError } from '@modelcontextprotocol/client';
import type { Organisation } from '../src/domain/organisations/organisations.repository.ts';
import { startTestApp, type TestContext } from './support/harness.ts';
import { createFlowBrowser, pkce } from './support/oauth.ts';
import { mcpTransport } from './support/mcp.ts';
import { TestOAuthProvider } from './support/mcp-oauth.ts';

const PASSWORD = 'correct horse battery';
const CALLBACK = 'http://127.0.0.1:9/callback';

describe('Client ID Metadata Documents', () => {
  let t: TestContext;
  let org: Organisation;
  let person: { id: string; email: string };
  const documents = new Map<string, Record<string, unknown>>();

  before(async () => {
    t = await startTestApp();
    await t.listen();
    org = await t.make.org({ address: `cimd-${Math.random().toString(36).slice(2, 8)}.localhost` });
    person = await t.make.person(org, { roles: ['admin'], password: PASSWORD, name: 'Ada Admin' });
    t.receiver.respond((request) => {
      const document = documents.get(request.path);
      return document ? { status: 200, headers: { 'content-type': 'application/json', 'cache-control': 'max-age=3600' }, body: JSON.stringify(document) } : { status: 404 };
    });
  });
  after(() => t.close());

  /** A document served at `path`, naming `clientId` (its own URL unless told otherwise). */
  function serve(path: string, clientName: string, clientId?: string): string {
    const url = `${t.receiver.url}${path}`;
    documents.set(path, { client_id: clientId ?? url, client_name: clientName, redirect_uris: [CALLBACK], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' });
    return url;
  }
  const fetches = (path: string) => t.receiver.received.filter((r) => r.path === path).length;

  async function authorize(clientId: string) {
    const browser = createFlowBrowser(t, t.originOf(org.address));
    await browser.signIn(person.email, PASSWORD);
    const url = new URL(`${t.originOf(org.address)}/oauth/authorize`);
    for (const [k, v] of Object.entries({ client_id: clientId, redirect_uri: CALLBACK, response_type: 'code', scope: 'courses:read', state: 's', code_challenge: (await pkce()).challenge, code_challenge_method: 'S256', resource: `${t.originOf(org.address)}/mcp` })) url.searchParams.set(k, v);
    return { browser, page: await browser.go(url.toString()) };
  }

  test('the SDK client names itself by its document; the consent page shows the name it gives itself; one fetch', async () => {
    const clientId = serve('/clients/notebook.json', 'Notebook assistant');
    const provider = new TestOAuthProvider(CALLBACK, 'Notebook assistant', { clientMetadataUrl: clientId });
    const first = new Client({ name: 'notebook', version: '1.0.0' });
    await assert.rejects(first.connect(mcpTransport(t, org, { authProvider: provider })), (err) => err instanceof UnauthorizedError);
    assert.equal(provider.authorizationUrl!.searchParams.get('client_id'), clientId, 'no registration: the URL is the client id');

    const browser = createFlowBrowser(t, t.originOf(org.address));
    await browser.signIn(person.email, PASSWORD);
    const consent = await browser.go(provider.authorizationUrl!.toString());
    assert.equal(consent.status, 200);
    assert.match(consent.html, /<h1>Allow Notebook assistant to act as you\?<\/h1>/);
    assert.ok(consent.html.includes(`(the name it gives itself, from <code>${clientId}</code>)`));
    const back = await browser.decide(consent.html, 'allow');
    const transport = mcpTransport(t, org, { authProvider: provider });
    await transport.finishAuth(new URL(back.location!).searchParams);
    const client = new Client({ name: 'notebook', version: '1.0.0' });
    await client.connect(mcpTransport(t, org, { authProvider: provider }));
    const me: any = await client.callTool({ name: 'get_me', arguments: {} });
    assert.equal(me.structuredContent.subject.person_id, person.id);
    await client.close();
    assert.equal(fetches('/clients/notebook.json'), 1, 'fetched once, then kept');
    const none = await t.database.db.selectFrom('oauth_clients').select('id').where('organisation_id', '=', org.id).execute();
    assert.equal(none.length, 0, 'nothing registered');
  });

  test('a document that names another client_id is refused', async () => {
    const clientId = serve('/clients/impostor.json', 'Impostor', `${t.receiver.url}/clients/someone-else.json`);
    const { page } = await authorize(clientId);
    assert.equal(page.status, 400);
    assert.doesNotMatch(page.html, /Impostor/);
  });

  test('an address the SSRF guard refuses (WEBHOOK_ALLOW_HOSTS not naming it) is never fetched', async () => {
    // Another deployment whose WEBHOOK_ALLOW_HOSTS does not let loopback through: the receiver is never asked.
    const strict = await startTestApp({ env: { WEBHOOK_ALLOW_HOSTS: '192.0.2.1/32' } });
    try {
      await strict.listen();
      const other = await strict.make.org({ address: `cimd-strict-${Math.random().toString(36).slice(2, 8)}.localhost` });
      const admin = await strict.make.person(other, { roles: ['admin'], password: PASSWORD });
      const browser = createFlowBrowser(strict, strict.originOf(other.address));
      await browser.signIn(admin.email, PASSWORD);
      const clientId = serve('/clients/guarded.json', 'Guarded');
      const url = new URL(`${strict.originOf(other.address)}/oauth/authorize`);
      for (const [k, v] of Object.entries({ client_id: clientId, redirect_uri: CALLBACK, response_type: 'code', scope: 'courses:read', state: 's', code_challenge: (await pkce()).challenge, code_challenge_method: 'S256' })) url.searchParams.set(k, v);
      const page = await browser.go(url.toString());
      assert.equal(page.status, 400);
      assert.doesNotMatch(page.html, /name="decision"/);
      assert.equal(fetches('/clients/guarded.json'), 0);
    } finally {
      await strict.close();
    }
  });

  test('while the organisation does not allow self-registration: refused, the document not fetched', async () => {
    await t.app.services.mcpSettings.save(org.id, { enabled: true, allowSelfRegistration: false, toolsOn: ['get_me'] });
    const clientId = serve('/clients/closed.json', 'Closed door');
    const { page } = await authorize(clientId);
    assert.equal(page.status, 400);
    assert.equal(fetches('/clients/closed.json'), 0);
    // A document still kept from before is refused as well.
    const { page: kept } = await authorize(`${t.receiver.url}/clients/notebook.json`);
    assert.equal(kept.status, 400);
    await t.app.services.mcpSettings.save(org.id, { enabled: true, allowSelfRegistration: true, toolsOn: ['get_me'] });
  });
});
