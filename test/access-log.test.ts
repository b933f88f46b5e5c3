// The access log as shipped (docs/operating.md#logs): a real server process at the default LOG_LEVEL=info writes
// exactly one line per request it answers, with method, route, status, duration and request id, and nothing of
// the credential it was sent; Fastify's own pair of lines ("incoming request", "request completed") is gone.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestContext } from './support/harness.ts';
import { loopbackFetch } from './support/oauth.ts';
import { startServerProcess } from './support/server-process.ts';
import { until } from './support/wait.ts';

describe('access log of a server process at LOG_LEVEL=info', () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('one line per request: method, route, status, duration_ms, reqId; no credential', { timeout: 60_000 }, async () => {
    const c = await t.make.caller();
    const section = await t.make.section(c.org);
    const server = startServerProcess(t.processEnv);
    const sent: Array<{ requestId: string; method: string; route: string | null; status: number }> = [];
    try {
      const base = await server.url;
      await until(async () => (await fetch(`${base}/readyz`)).status === 200, 'the server to be ready', 30_000);
      const origin = `http://${c.org.address}:${new URL(base).port}`;
      const send = async (method: string, path: string, route: string | null, init: RequestInit = {}) => {
        const res = await loopbackFetch(`${origin}${path}`, { method, ...init });
        await res.arrayBuffer();
        sent.push({ requestId: res.headers.get('request-id')!, method, route, status: res.status });
      };
      const key = { authorization: `Bearer ${c.key}` };
      await send('GET', `/api/v1/sections/${section.id}`, '/api/v1/sections/:id', { headers: key });
      await send('PATCH', `/api/v1/sections/${section.id}`, '/api/v1/sections/:id', { headers: { ...key, 'content-type': 'application/json' }, body: JSON.stringify({ title: 'Logged' }) });
      await send('GET', `/api/v1/sections/${section.id}?token=secret-in-query`, '/api/v1/sections/:id');
      await send('GET', '/no/such/route', null);
      const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_section', arguments: { id: section.id }, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'test', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } } };
      const mcpHeaders = { ...key, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'get_section' };
      await send('POST', '/mcp', '/mcp', { headers: mcpHeaders, body: JSON.stringify(call) });
      await until(() => sent.every((s) => server.logs.some((l) => l.reqId === s.requestId && l.msg === 'request')), 'the access lines');
    } finally {
      assert.equal(await server.stop('SIGTERM'), 0);
    }
    assert.deepEqual(sent.map((s) => s.status), [200, 200, 401, 404, 200]);
    for (const s of sent) {
      const lines = server.logs.filter((l) => l.reqId === s.requestId);
      assert.equal(lines.length, 1, `exactly one line for ${s.method} ${s.route}: ${JSON.stringify(lines)}`);
      const [line] = lines;
      assert.equal(line.msg, 'request');
      assert.equal(line.level, 30);
      assert.equal(line.method, s.method);
      assert.equal(line.route, s.route);
      assert.equal(line.status, s.status);
      assert.equal(typeof line.duration_ms, 'number');
      assert.ok((line.duration_ms as number) >= 0);
    }
    const text = server.output.map((o) => o.line).join('\n');
    assert.doesNotMatch(text, /incoming request|request completed/);
    assert.ok(!text.includes(c.key), 'the API key is never logged');
    assert.ok(!text.includes('secret-in-query'), 'nor a URL’s query');
  });
});
