// "A call runs exactly like the REST request" (docs/mcp.md#tools), proved by running the same inputs through the REST
// API and through tools/call and comparing the outcomes: success, 422, 404, 403 (scope and capability), 409,
// idempotency replay and key reuse, the events written, and the per-credential rate limit they share.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/client';
import type { Organisation } from '../src/domain/organisations/organisations.repository.ts';
import { dialectUnderTest, startTestApp, type TestContext } from './support/harness.ts';
import type { Caller } from './support/factories.ts';
import { connectMcp } from './support/mcp.ts';
import { until } from './support/wait.ts';

/** What may differ between two runs of the same request: ids, times, the request id. */
function comparable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(comparable);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => !['id', 'request_id', 'created_at', 'updated_at', 'sort_key'].includes(k))
        .map(([k, v]) => [k, comparable(v)]),
    );
  }
  return value;
}

describe('a tool call runs exactly like its REST request', () => {
  let t: TestContext;
  let c: Caller;
  let org: Organisation;
  let mcp: Client;

  before(async () => {
    t = await startTestApp();
    await t.listen();
    c = await t.make.caller();
    org = c.org;
    mcp = await connectMcp(t, org, { credential: c.key });
  });
  after(async () => {
    await mcp.close();
    await t.close();
  });

  /** The same request both ways: the REST answer and the tool result. */
  async function both(tool: string, rest: { method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'; path: string; body?: unknown; headers?: Record<string, string> }, args: Record<string, unknown>, via: { key?: string; client?: Client } = {}) {
    const viaRest = await t.api.request({ host: org.address, key: via.key ?? c.key, ...rest });
    const viaMcp: any = await (via.client ?? mcp).callTool({ name: tool, arguments: args });
    return { rest: viaRest, mcp: viaMcp, mcpStatus: viaMcp._meta['atrium/status'] as number };
  }

  test('success: the same status and the same resource', async () => {
    const course = await t.make.course(org);
    const body = { course_id: course.id, title: 'Week 1', visible: false };
    const r = await both('create_section', { method: 'POST', path: '/sections', body }, body);
    assert.equal(r.rest.status, 201);
    assert.equal(r.mcpStatus, 201);
    assert.notEqual(r.mcp.isError, true);
    assert.deepEqual(comparable(r.mcp.structuredContent), comparable(r.rest.body));
  });

  test('422, 404, 409: the same problem document (code, status, errors)', async () => {
    const section = await t.make.section(org);
    const deleted = await t.make.section(org);
    await t.app.services.sections.remove(t.app.db, org.id, deleted.id);
    const cases: Array<[string, Parameters<typeof both>[1], Record<string, unknown>, number]> = [
      ['update_section', { method: 'PATCH', path: `/sections/${section.id}`, body: { title: '', visible: 'yes' } }, { id: section.id, title: '', visible: 'yes' }, 422],
      ['get_section', { method: 'GET', path: '/sections/01a20936-cdd1-7536-ad92-1eb06bf34ab6' }, { id: '01a20936-cdd1-7536-ad92-1eb06bf34ab6' }, 404],
      ['update_section', { method: 'PATCH', path: `/sections/${deleted.id}`, body: { title: 'Again' } }, { id: deleted.id, title: 'Again' }, 409],
    ];
    for (const [tool, rest, args, status] of cases) {
      const r = await both(tool, rest, args);
      assert.equal(r.rest.status, status, tool);
      assert.equal(r.mcpStatus, status, tool);
      assert.equal(r.mcp.isError, true);
      assert.deepEqual(comparable(r.mcp.structuredContent), comparable(r.rest.body), tool);
    }
  });

  test('403: a scope the credential lacks, a capability the person lacks', async () => {
    const narrow = await t.make.caller({ org, scopes: ['courses:read'] });
    const narrowMcp = await connectMcp(t, org, { credential: narrow.key });
    const section = await t.make.section(org);
    const scope = await both('update_section', { method: 'PATCH', path: `/sections/${section.id}`, body: { title: 'X' } }, { id: section.id, title: 'X' }, { key: narrow.key, client: narrowMcp });
    assert.equal(scope.rest.body.code, 'auth.insufficient_scope');
    assert.deepEqual(comparable(scope.mcp.structuredContent), comparable(scope.rest.body));
    await narrowMcp.close();

    const teacher = await t.make.caller({ org, roles: ['teacher'], platformAdmin: false });
    const teacherMcp = await connectMcp(t, org, { credential: teacher.key });
    const capability = await both('restore_deployment_storage', { method: 'POST', path: '/storage_targets/actions/restore_deployment', body: {} }, {}, { key: teacher.key, client: teacherMcp });
    assert.equal(capability.rest.body.code, 'auth.missing_capability');
    assert.deepEqual(comparable(capability.mcp.structuredContent), comparable(capability.rest.body));
    await teacherMcp.close();
  });

  test('idempotency: a replay answers the recorded result, the key reused for other arguments is a 409', async () => {
    const course = await t.make.course(org);
    const args = { course_id: course.id, title: 'Once', idempotency_key: 'mcp-once' };
    const first: any = await mcp.callTool({ name: 'create_section', arguments: args });
    const replay: any = await mcp.callTool({ name: 'create_section', arguments: args });
    assert.equal(first._meta['atrium/status'], 201);
    assert.deepEqual(replay.structuredContent, first.structuredContent);
    assert.equal(replay._meta['atrium/idempotency_replayed'], true);
    const sections = await t.database.db.selectFrom('sections').select('id').where('course_id', '=', course.id).where('title', '=', 'Once').execute();
    assert.equal(sections.length, 1);
    const reused: any = await mcp.callTool({ name: 'create_section', arguments: { ...args, title: 'Twice' } });
    assert.equal(reused.structuredContent.code, 'idempotency.key_reused');

    // The REST request with the same key and body is the same request: it replays what the tool call recorded.
    const rest = await t.api.request({ method: 'POST', path: '/sections', host: org.address, key: c.key, body: { course_id: course.id, title: 'Once' }, headers: { 'idempotency-key': 'mcp-once' } });
    assert.equal(rest.headers['idempotency-replayed'], 'true');
    assert.deepEqual(rest.body, first.structuredContent);

    // An operation that requires a key refuses a call without one, as its REST request does.
    const missing: any = await mcp.callTool({ name: 'bulk_lesson_pages', arguments: { operations: [] } });
    assert.equal(missing.structuredContent.code, 'idempotency.key_required');
  });

  test('events: the same event, written with the change', async () => {
    const events = (type: string) => t.database.db.selectFrom('outbox_events').select(['type', 'data']).where('organisation_id', '=', org.id).where('type', '=', type).execute();
    const before = (await events('course.created')).length;
    const r = await both('create_course', { method: 'POST', path: '/courses', body: { fullname: 'Evented', shortname: 'EV-REST' } }, { fullname: 'Evented', shortname: 'EV-MCP' });
    assert.equal(r.mcpStatus, 201);
    const after = await events('course.created');
    assert.equal(after.length, before + 2);
    const ids = after.map((e) => (typeof e.data === 'string' ? JSON.parse(e.data) : e.data).id);
    assert.ok(ids.includes(r.mcp.structuredContent.id), 'the tool call’s course has its event');
  });
});

describe('tool calls count against the credential’s rate limit, shared with the REST API', () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp({ env: { RATE_LIMIT_PER_MINUTE: '6' } });
    await t.listen();
  });
  after(() => t.close());

  test('past the limit a tool call is an isError 429 problem document, and the REST API refuses too', async () => {
    const c = await t.make.caller();
    const client = await connectMcp(t, c.org, { credential: c.key });
    let limited: any;
    for (let i = 0; i < 10 && !limited; i++) {
      const res: any = await client.callTool({ name: 'get_me', arguments: {} });
      if (res.isError) limited = res;
    }
    assert.ok(limited, 'a call was limited');
    assert.equal(limited.structuredContent.status, 429);
    assert.equal(limited.structuredContent.code, 'rate_limit.exceeded');
    assert.equal(typeof limited.structuredContent.retry_after, 'number');
    assert.equal((await t.api.request({ host: c.org.address, key: c.key, path: '/me' })).status, 429);
    await client.close();
  });
});

describe('a tool call runs its operation inside the /mcp request (src/mcp/tool-call.ts)', () => {
  let t: TestContext;
  let statements: string[] = [];
  before(async () => {
    t = await startTestApp({ onQuery: (query) => statements.push(query.sql) });
  });
  after(() => t.close());

  test('a tool call reads the database exactly as its REST request does: the organisation once, then the resource', async () => {
    const c = await t.make.caller();
    const section = await t.make.section(c.org);
    const envelope = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'test', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
    const viaMcp = () =>
      t.app.inject({
        method: 'POST',
        url: '/mcp',
        headers: { host: c.org.address, authorization: `Bearer ${c.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'get_section' },
        payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_section', arguments: { id: section.id }, _meta: envelope } }),
      });
    const viaRest = () => t.app.inject({ method: 'GET', url: `/api/v1/sections/${section.id}`, headers: { host: c.org.address, authorization: `Bearer ${c.key}` } });
    // The first of each verifies the key and reads the MCP settings (both then cached under the credentials epoch).
    for (const request of [viaMcp, viaRest]) assert.equal((await request()).statusCode, 200);
    // The key's first use also records last_used_at, in the background: on PostgreSQL it may finish during the
    // next request and would be counted there. Wait until it has.
    await until(() => statements.some((s) => s.startsWith('update "api_keys" set "last_used_at"')), "the key's last_used_at write");

    statements = [];
    const mcpAnswer = await viaMcp();
    const mcpStatements = statements;
    statements = [];
    await viaRest();
    assert.equal(mcpAnswer.json().result.structuredContent.id, section.id);
    // On PostgreSQL both read their organisation with their first statement, as a rider the driver sends
    // (src/http/tenancy-cache.ts), which Kysely's log does not see; on SQLite both read it by itself first.
    const organisationRead = (s: string) => s.startsWith('select * from "organisations" where "address"');
    assert.deepEqual(mcpStatements, statements);
    assert.equal(mcpStatements.filter(organisationRead).length, dialectUnderTest === 'postgres' ? 0 : 1, mcpStatements.join('\n'));
    assert.equal(statements.filter((s) => !organisationRead(s)).length, 1, statements.join('\n'));
    // One HTTP request: the tool result names the /mcp request's own id, as its audit entry would.
    assert.match(String(mcpAnswer.headers['request-id']), /^req_[0-9a-f]{32}$/);
    assert.equal(mcpAnswer.json().result._meta['atrium/request_id'], mcpAnswer.headers['request-id']);
    // The SDK's answer goes out with what /mcp set before it (src/mcp/web-exchange.ts), its own headers over them.
    assert.equal(mcpAnswer.headers['access-control-allow-origin'], '*');
    assert.match(String(mcpAnswer.headers['access-control-expose-headers']), /Mcp-Protocol-Version/);
    assert.equal(mcpAnswer.headers['cache-control'], 'no-store');
    assert.match(String(mcpAnswer.headers['content-type']), /^application\/json/);
    assert.equal(Number(mcpAnswer.headers['content-length']), Buffer.byteLength(mcpAnswer.body), 'a JSON answer goes with its length');
    assert.equal(mcpAnswer.headers['transfer-encoding'], undefined);
  });

  test('no REST request can pose as a tool call: a bearer token shaped like the old in-process dispatch credential is a 401', async () => {
    const c = await t.make.caller();
    const section = await t.make.section(c.org);
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/sections/${section.id}`, headers: { host: c.org.address, authorization: 'Bearer atr_mcp_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.1' } });
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().code, 'auth.invalid_credential');
  });
});
