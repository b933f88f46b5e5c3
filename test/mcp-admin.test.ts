// /admin/integrations/mcp at the request level (docs/mcp.md#the-administrators-page, docs/authentication.md#oauth-2): the switches and every tool
// with its description and mark, the defaults, Save (with its CSRF token), and that what is saved is what the
// MCP server and the self-registration endpoint then do. The same page runs in Chromium in
// test/browser/mcp.browser.test.ts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { operations } from '../src/all-operations.ts';
import { buildTools } from '../src/mcp/tools.ts';
import { startTestApp, type TestContext } from './support/harness.ts';
import { createPageClient } from './support/page-client.ts';

const PASSWORD = 'correct horse battery';
const PAGE = '/admin/integrations/mcp';
const tools = buildTools(operations);

describe('/admin/integrations/mcp', () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  async function admin() {
    const c = await t.make.caller();
    const person = await t.make.person(c.org, { roles: ['admin'], password: PASSWORD });
    const browser = createPageClient(t.app, c.org.address);
    assert.equal((await browser.signIn(person.email, PASSWORD)).status, 303);
    return { ...c, browser };
  }

  const toolsListed = async (c: { org: { address: string }; key: string }) => {
    const res = await t.app.inject({ method: 'POST', url: '/mcp', headers: { host: c.org.address, authorization: `Bearer ${c.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, payload: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' });
    if (res.statusCode !== 200) return res.statusCode;
    return (JSON.parse(/^data: (.*)$/m.exec(res.body)?.[1] ?? res.body).result.tools as Array<{ name: string }>).map((x) => x.name).sort();
  };

  test('every tool with its description and mark, a labelled checkbox each; defaults: on, every tool but the destructive ones, self-registration', async () => {
    const { browser } = await admin();
    const page = await browser.get(PAGE);
    assert.equal(page.status, 200);
    assert.match(page.html, /<input type="checkbox" id="mcp-enabled" name="enabled" value="on" checked>\s*<label for="mcp-enabled">MCP server enabled<\/label>/);
    assert.match(page.html, /<input type="checkbox" id="mcp-self-registration" name="allow_self_registration" value="on" checked>\s*<label for="mcp-self-registration">Allow MCP clients to register themselves<\/label>/);
    assert.match(page.html, /<button type="submit">Save<\/button>/);
    for (const tool of tools) {
      const row = new RegExp(`<tr>\\s*<th scope="row">(.*?)</th>\\s*<td>(.*?)</td>\\s*<td>(.*?)</td>`, 's');
      const at = page.html.indexOf(`id="tool-${tool.name}"`);
      assert.ok(at > 0, tool.name);
      const [, head, description, mark] = row.exec(page.html.slice(page.html.lastIndexOf('<tr>', at)))!;
      assert.match(head, new RegExp(`<input type="checkbox" id="tool-${tool.name}" name="tools" value="${tool.name}"${tool.op.destructive ? '' : ' checked'}> <label for="tool-${tool.name}"><code>${tool.name}</code></label>`));
      assert.equal(description, tool.op.summary.replace(/'/g, '&#39;'));
      assert.match(mark, tool.op.destructive ? />destructive</ : tool.op.writes ? /^$/ : />read-only</, tool.name);
    }
    assert.match((await browser.get('/admin')).html, /href="\/admin\/integrations\/mcp"/);
  });

  test('Save applies at once: tools on and off, the server switched off, self-registration refused', async () => {
    const c = await admin();
    await c.browser.get(PAGE);
    const res = await c.browser.post(PAGE, { enabled: 'on', tools: ['get_me', 'delete_section', 'not_a_tool'] });
    assert.equal(res.status, 303);
    assert.match((await c.browser.follow(res)).html, /Saved\./);
    assert.deepEqual(await toolsListed(c), ['delete_section', 'get_me']);
    const settings = await t.app.services.mcpSettings.get(c.org.id);
    assert.equal(settings.allowSelfRegistration, false);
    const register = await t.app.inject({ method: 'POST', url: '/oauth/register', headers: { host: c.org.address, 'content-type': 'application/json' }, payload: JSON.stringify({ redirect_uris: ['http://127.0.0.1:9/cb'], token_endpoint_auth_method: 'none' }) });
    assert.equal(register.statusCode, 403);
    assert.equal(JSON.parse(register.body).error, 'access_denied');

    await c.browser.get(PAGE);
    await c.browser.post(PAGE, { allow_self_registration: 'on', tools: ['get_me'] });
    assert.equal(await toolsListed(c), 404);
    const page = await c.browser.get(PAGE);
    assert.match(page.html, /id="mcp-enabled" name="enabled" value="on">/, 'shown off');
    assert.match(page.html, /id="tool-get_me" name="tools" value="get_me" checked>/);
    assert.match(page.html, /id="tool-list_courses" name="tools" value="list_courses">/);
  });

  test('without the CSRF token: a 403 page and nothing changes; a teacher cannot save', async () => {
    const c = await admin();
    await c.browser.get(PAGE);
    const res = await c.browser.post(PAGE, { tools: ['get_me'] }, { csrf: null });
    assert.equal(res.status, 403);
    assert.equal((await t.app.services.mcpSettings.get(c.org.id)).toolsOn, undefined);
    const teacher = await t.make.person(c.org, { roles: ['teacher'], password: PASSWORD });
    const other = createPageClient(t.app, c.org.address);
    await other.signIn(teacher.email, PASSWORD);
    assert.equal((await other.get(PAGE)).status, 403);
    assert.equal((await other.post(PAGE, { tools: ['get_me'] })).status, 403);
    assert.equal((await t.app.services.mcpSettings.get(c.org.id)).toolsOn, undefined);
  });
});
