// The MCP server as a person meets it in Chromium. First the whole OAuth path an MCP client application takes
// with nothing but the URL, driven by the official SDK client's own OAuth support: the 401 challenge, the
// protected-resource document, the authorization server's metadata, dynamic registration, then sign-in and
// consent in the browser, the code back at the application's loopback callback, a token for `{origin}/mcp`, and
// a tools/call. Then the administrator's page, by label and role.
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client, UnauthorizedError } from '@modelcontextprotocol/client';
import type { Browser, BrowserContext } from 'playwright-core';
import type { Organisation } from '../../src/domain/organisations/organisations.repository.ts';
import { startTestApp, type TestContext } from '../support/harness.ts';
import { launchBrowser, newPage } from '../../testkit/browser.ts';
import { connectMcp, mcpTransport } from '../support/mcp.ts';
import { startCallbackServer, TestOAuthProvider } from '../support/mcp-oauth.ts';

const PASSWORD = 'correct horse battery';

describe('MCP in Chromium', () => {
  let t: TestContext;
  let browser: Browser;
  let context: BrowserContext | undefined;
  let callback: Awaited<ReturnType<typeof startCallbackServer>>;
  let org: Organisation;
  let person: { id: string; email: string };

  before(async () => {
    t = await startTestApp();
    await t.listen();
    browser = await launchBrowser();
    callback = await startCallbackServer();
    org = await t.make.org({ address: `mcp-ui-${Math.random().toString(36).slice(2, 8)}.localhost` });
    person = await t.make.person(org, { roles: ['admin'], password: PASSWORD, name: 'Ada Admin' });
  });
  afterEach(async () => {
    await context?.close();
    context = undefined;
  });
  after(async () => {
    await browser?.close();
    await callback.close();
    await t.close();
  });

  test('an MCP client with only the URL: discovery, registration, sign-in and consent, a token for /mcp, a tool call', async () => {
    const provider = new TestOAuthProvider(callback.url, 'Desk assistant');
    const first = new Client({ name: 'desk-assistant', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await assert.rejects(first.connect(mcpTransport(t, org, { authProvider: provider })), (err) => err instanceof UnauthorizedError);
    // The SDK found the authorization server from the challenge and registered itself there.
    const registered = await t.database.db.selectFrom('oauth_clients').selectAll().where('organisation_id', '=', org.id).where('name', '=', 'Desk assistant').executeTakeFirstOrThrow();
    assert.equal(Boolean(registered.self_registered), true);
    const authorizationUrl = provider.authorizationUrl!;
    assert.equal(authorizationUrl.origin, t.originOf(org.address));
    assert.equal(authorizationUrl.searchParams.get('resource'), `${t.originOf(org.address)}/mcp`);

    ({ context } = await newPage(browser));
    const page = await context.newPage();
    await page.goto(authorizationUrl.toString());
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByLabel('Email').fill(person.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Allow Desk assistant to act as you?' }).waitFor();
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.getByRole('heading', { name: 'Back in the assistant' }).waitFor();

    const transport = mcpTransport(t, org, { authProvider: provider });
    await transport.finishAuth(callback.callbacks.at(-1)!.searchParams);
    assert.match(provider.accessToken ?? '', /^atr_at_/);
    const client = new Client({ name: 'desk-assistant', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(mcpTransport(t, org, { authProvider: provider }));
    const me: any = await client.callTool({ name: 'get_me', arguments: {} });
    assert.equal(me.structuredContent.subject.person_id, person.id);
    assert.equal(me.structuredContent.credential.kind, 'oauth_token');
    await client.close();
    // The token is for the MCP server, not the REST API.
    assert.equal((await t.api.request({ host: org.address, key: provider.accessToken!, path: '/me' })).status, 401);
  });

  test('the administrator switches a destructive tool on and the server off, by label; the server follows at once', async () => {
    const key = (await t.make.apiKey(org, person.id)).key;
    ({ context } = await newPage(browser));
    const page = await context.newPage();
    await page.goto(`${t.originOf(org.address)}/admin/integrations/mcp`);
    await page.getByLabel('Email').fill(person.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'MCP server' }).waitFor();
    assert.equal(await page.getByLabel('MCP server enabled').isChecked(), true);
    assert.equal(await page.getByLabel('Allow MCP clients to register themselves').isChecked(), true);
    assert.equal(await page.getByLabel('delete_section').isChecked(), false);
    assert.equal(await page.getByLabel('update_section').isChecked(), true);
    await page.getByRole('row', { name: /delete_section/ }).getByText('destructive').waitFor();
    await page.getByRole('row', { name: /^get_section Read a section/ }).getByText('read-only').waitFor();

    await page.getByLabel('delete_section').check();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    const client = await connectMcp(t, org, { credential: key });
    assert.ok((await client.listTools()).tools.some((x) => x.name === 'delete_section'));

    await page.getByLabel('MCP server enabled').uncheck();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    await assert.rejects(client.listTools(), /404|mcp\.disabled/);
    await client.close();
  });
});
