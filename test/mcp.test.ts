// The MCP server (docs/mcp.md) through the official SDK client against the app listening on loopback:
// discovery, tools/list per scope set and per administrator choice, a call of every tool, both confirmation
// paths, the refusals (plan, switched off, credentials) and the bad input the issue lists, which each get the
// protocol's error or an isError result with the problem document — never a 500 — and change nothing.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/client';
import { operations } from '../src/all-operations.ts';
import type { Operation } from '../src/operations/operation.ts';
import type { Organisation } from '../src/domain/organisations/organisations.repository.ts';
import { buildTools, toolName } from '../src/mcp/tools.ts';
import { startTestApp, type TestContext } from './support/harness.ts';
import type { Caller } from './support/factories.ts';
import { exampleRequest } from './support/examples.ts';
import { loopbackFetch } from './support/oauth.ts';
import { connectMcp, mcpUrl, postMcp } from './support/mcp.ts';
import { changedBitVariant, spareBitsVariant } from './support/base64url.ts';

const tools = buildTools(operations);
const allToolNames = tools.map((x) => x.name);
const defaultToolNames = tools.filter((x) => !x.op.destructive).map((x) => x.name);

/** The tool arguments of an example REST request: path values by the operation's template, query, body. */
function argumentsOf(op: Operation, example: { path: string; body?: unknown }): Record<string, unknown> {
  const [path, search] = example.path.split('?');
  const names: string[] = [];
  const pattern = new RegExp(`^${op.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{(\w+)\}/g, (_p, name: string) => (names.push(name), '([^/]+)'))}$`);
  const match = pattern.exec(path)!;
  const args: Record<string, unknown> = Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(match[i + 1])]));
  for (const [k, v] of new URLSearchParams(search ?? '')) args[k] = v;
  return { ...args, ...((example.body as Record<string, unknown>) ?? {}) };
}

const statusOf = (result: any) => result._meta?.['atrium/status'];

/** The signature of a signed value (`body.signature`), as text. */
const signatureOf = (value: string) => value.slice(value.lastIndexOf('.') + 1);
const withSignature = (value: string, signature: string) => value.slice(0, value.lastIndexOf('.') + 1) + signature;

describe('MCP server at /mcp', () => {
  let t: TestContext;
  let c: Caller;
  let org: Organisation;

  before(async () => {
    t = await startTestApp();
    await t.listen();
    c = await t.make.caller({ org: await t.make.org({ address: `mcp-${Math.random().toString(36).slice(2, 8)}.localhost` }) });
    org = c.org;
  });
  after(() => t.close());

  const enableTools = (o: Organisation, names: string[], more: { enabled?: boolean; allowSelfRegistration?: boolean } = {}) =>
    t.app.services.mcpSettings.save(o.id, { enabled: more.enabled ?? true, allowSelfRegistration: more.allowSelfRegistration ?? true, toolsOn: names, toolsKnown: allToolNames });

  describe('discovery (RFC 9728)', () => {
    test('without a credential: 401 with the resource_metadata challenge, as a problem document, readable cross-origin', async () => {
      const res = await postMcp(t, org, '{"jsonrpc":"2.0","id":1,"method":"tools/list"}', { origin: 'https://assistant.example' });
      assert.equal(res.status, 401);
      assert.equal(res.headers.get('www-authenticate'), `Bearer resource_metadata="${t.originOf(org.address)}/.well-known/oauth-protected-resource/mcp"`);
      assert.equal(res.json.code, 'auth.missing_credential');
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
      assert.equal(res.headers.get('access-control-allow-credentials'), null);
      assert.match(res.headers.get('access-control-expose-headers') ?? '', /WWW-Authenticate/);
      assert.match(res.headers.get('access-control-expose-headers') ?? '', /Mcp-Protocol-Version/);
    });

    test('a credential that is not valid: 401 invalid_token with the same challenge', async () => {
      for (const credential of ['atr_live_not-a-key', 'atr_at_nothing', 'garbage', `atr_mcp_guess.${c.key}`]) {
        const res = await postMcp(t, org, '{"jsonrpc":"2.0","id":1,"method":"tools/list"}', { authorization: `Bearer ${credential}` });
        assert.equal(res.status, 401, credential);
        assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource\/mcp", error="invalid_token"$/);
      }
    });

    test('the protected-resource document names the resource, the authorization server and the scopes, at both addresses', async () => {
      const origin = t.originOf(org.address);
      for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
        const res = await loopbackFetch(`${origin}${path}`, { headers: { origin: 'https://assistant.example' } });
        assert.equal(res.status, 200);
        assert.equal(res.headers.get('access-control-allow-origin'), '*');
        const doc = (await res.json()) as any;
        assert.equal(doc.resource, `${origin}/mcp`);
        assert.deepEqual(doc.authorization_servers, [origin]);
        assert.ok(doc.scopes_supported.includes('courses:read') && doc.scopes_supported.includes('users:delete'));
      }
      const as = (await (await loopbackFetch(`${origin}/.well-known/oauth-authorization-server`)).json()) as any;
      assert.equal(as.issuer, origin);
      assert.equal(as.client_id_metadata_document_supported, true);
    });

    test('CORS preflight on /mcp and the document: any origin, no cookies', async () => {
      for (const path of ['/mcp', '/.well-known/oauth-protected-resource/mcp']) {
        const res = await loopbackFetch(`${t.originOf(org.address)}${path}`, { method: 'OPTIONS', headers: { origin: 'https://assistant.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, mcp-protocol-version' } });
        assert.equal(res.status, 204);
        assert.equal(res.headers.get('access-control-allow-origin'), '*');
        assert.match(res.headers.get('access-control-allow-headers') ?? '', /authorization/i);
        assert.equal(res.headers.get('access-control-allow-credentials'), null);
      }
    });
  });

  describe('tools/list', () => {
    test('every tool but the destructive ones by default, each named, described and annotated as the contract says (both eras)', async () => {
      for (const era of ['modern', 'legacy'] as const) {
        const client = await connectMcp(t, org, { credential: c.key, era });
        assert.equal(client.getProtocolEra(), era);
        const { tools: listed } = await client.listTools();
        assert.deepEqual(listed.map((x) => x.name).sort(), [...defaultToolNames].sort());
        const update = listed.find((x) => x.name === 'update_section')!;
        assert.equal(update.description, 'Rename a section, or show or hide it');
        assert.deepEqual(update.annotations, { readOnlyHint: false, destructiveHint: false, idempotentHint: true });
        assert.deepEqual(Object.keys(update.inputSchema.properties!).sort(), ['id', 'idempotency_key', 'title', 'visible']);
        assert.deepEqual(update.inputSchema.required, ['id']);
        const read = listed.find((x) => x.name === 'get_email_template_versions')!;
        assert.deepEqual(read.annotations, { readOnlyHint: true, destructiveHint: false, idempotentHint: true });
        assert.deepEqual(read.inputSchema.required, ['message_key', 'language']);
        await client.close();
      }
    });

    test('only the tools the credential’s scopes allow (tools without a scope, like get_me, always)', async () => {
      await enableTools(org, allToolNames);
      try {
        for (const scopes of [['courses:read'], ['courses:delete', 'email:read'], []]) {
          const p = await t.make.person(org, { roles: ['admin'] });
          const key = (await t.make.apiKey(org, p.id, { scopes })).key;
          const client = await connectMcp(t, org, { credential: key });
          const names = (await client.listTools()).tools.map((x) => x.name).sort();
          const expected = tools.filter((x) => x.op.scope === null || scopes.includes(x.op.scope)).map((x) => x.name).sort();
          assert.deepEqual(names, expected, scopes.join(' '));
          await client.close();
        }
      } finally {
        await t.app.services.mcpSettings.save(org.id, { enabled: true, allowSelfRegistration: true, toolsOn: defaultToolNames, toolsKnown: allToolNames });
      }
    });

    test('an administrator’s choice applies at once, also on another server process', async () => {
      const client = await connectMcp(t, org, { credential: c.key });
      await enableTools(org, ['get_me', 'delete_section']);
      assert.deepEqual((await client.listTools()).tools.map((x) => x.name).sort(), ['delete_section', 'get_me']);
      const section = await t.make.section(org);
      await assert.rejects(client.callTool({ name: 'get_section', arguments: { id: section.id } }), /Unknown tool: get_section/);
      // A second process on the same database reads the same choice on its first request.
      const { buildApp } = await import('../src/app.ts');
      const other = await buildApp({ config: t.config, database: t.database, clock: t.clock, logger: false });
      try {
        const res = await other.inject({ method: 'POST', url: '/mcp', headers: { host: org.address, authorization: `Bearer ${c.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, payload: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' });
        const data = JSON.parse(/^data: (.*)$/m.exec(res.body)?.[1] ?? res.body);
        assert.deepEqual(data.result.tools.map((x: { name: string }) => x.name).sort(), ['delete_section', 'get_me']);
      } finally {
        await other.close();
      }
      await enableTools(org, allToolNames, { enabled: false });
      await assert.rejects(client.listTools(), /404|mcp\.disabled/);
      const res = await postMcp(t, org, '{"jsonrpc":"2.0","id":1,"method":"tools/list"}', { authorization: `Bearer ${c.key}` });
      assert.equal(res.status, 404);
      assert.equal(res.json.code, 'mcp.disabled');
      await t.app.services.mcpSettings.save(org.id, { enabled: true, allowSelfRegistration: true, toolsOn: defaultToolNames, toolsKnown: allToolNames });
      await client.close();
    });
  });

  describe('tools/call', () => {
    test('every tool runs its operation and answers its JSON as structuredContent and text', async () => {
      for (const op of operations) {
        // A fresh organisation per tool, so that what one example creates is not taken for the next.
        const caller = await t.make.caller({ org: await t.make.org() });
        await enableTools(caller.org, allToolNames);
        const args = argumentsOf(op, await exampleRequest(t.make, op, caller.org));
        if (op.idempotency === 'required') args.idempotency_key = `mcp-${op.id}`;
        const client = await connectMcp(t, caller.org, { credential: caller.key });
        let result: any = await client.callTool({ name: toolName(op.id), arguments: args });
        if (op.destructive) {
          assert.equal(result.structuredContent.confirmation_required, true, op.id);
          result = await client.callTool({ name: toolName(op.id), arguments: { ...args, confirmation_token: result.structuredContent.confirmation_token } });
        }
        assert.notEqual(result.isError, true, `${op.id}: ${JSON.stringify(result.structuredContent)}`);
        assert.ok([op.success.status, ...(op.success.alsoStatuses ?? [])].includes(statusOf(result)), `${op.id} → ${statusOf(result)}`);
        if (op.success.schema) {
          assert.equal(typeof result.structuredContent, 'object', op.id);
          assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent, op.id);
        }
        await client.close();
      }
    });

    test('a failure is an isError result carrying the problem document; the request id is the /mcp request’s', async () => {
      const client = await connectMcp(t, org, { credential: c.key });
      const result: any = await client.callTool({ name: 'get_section', arguments: { id: '01a20936-cdd1-7536-ad92-1eb06bf34ab6' } });
      assert.equal(result.isError, true);
      assert.equal(result.structuredContent.status, 404);
      assert.equal(result.structuredContent.code, 'section.not_found');
      assert.equal(result.structuredContent.request_id, result._meta['atrium/request_id']);
      await client.close();
    });

    test('a file’s bytes come back as content_type and content_base64', async () => {
      const file = await t.make.file(org, c.personId, 'hello bytes');
      const client = await connectMcp(t, org, { credential: c.key });
      const result: any = await client.callTool({ name: 'get_file_content', arguments: { id: file.id } });
      assert.equal(Buffer.from(result.structuredContent.content_base64, 'base64').toString(), 'hello bytes');
      await client.close();
    });
  });

  describe('destructive tools ask for confirmation', () => {
    const deletedAt = async (id: string) => (await t.app.services.sections.get(t.app.db, org.id, id)).deleted_at;

    before(() => enableTools(org, allToolNames));

    test('a 2026-07-28 client that declares elicitation is asked; accept runs it, once', async () => {
      const section = await t.make.section(org);
      const asked: string[] = [];
      const client = await connectMcp(t, org, { credential: c.key, onElicit: (message) => (asked.push(message), { action: 'accept', content: { confirm: true } }) });
      const result: any = await client.callTool({ name: 'delete_section', arguments: { id: section.id } });
      assert.equal(asked.length, 1);
      assert.match(asked[0], new RegExp(`delete a section: DELETE /api/v1/sections/${section.id}`));
      assert.equal(result.isError, undefined);
      assert.equal(statusOf(result), 204);
      assert.ok(await deletedAt(section.id));
      const events = await t.database.db.selectFrom('outbox_events').select('type').where('organisation_id', '=', org.id).where('type', '=', 'section.deleted').execute();
      assert.ok(events.length >= 1, 'the event was written with the change');
      await client.close();
    });

    test('decline or cancel does nothing', async () => {
      for (const action of ['decline', 'cancel'] as const) {
        const section = await t.make.section(org);
        const client = await connectMcp(t, org, { credential: c.key, onElicit: () => ({ action }) });
        const result: any = await client.callTool({ name: 'delete_section', arguments: { id: section.id } });
        assert.notEqual(result.isError, true);
        assert.deepEqual(result.structuredContent, { confirmed: false, action });
        assert.equal(await deletedAt(section.id), null);
        await client.close();
      }
    });

    test('request state replayed, or sent back for other arguments, is refused and changes nothing', async () => {
      const [a, b] = [await t.make.section(org), await t.make.section(org)];
      const envelope = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } };
      const call = (params: Record<string, unknown>) =>
        postMcp(t, org, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { ...params, _meta: envelope } }), { authorization: `Bearer ${c.key}`, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'delete_section' });
      const first = await call({ name: 'delete_section', arguments: { id: a.id } });
      assert.equal(first.json.result.resultType, 'input_required');
      const state = first.json.result.requestState as string;
      const accept = { confirm: { action: 'accept', content: { confirm: true } } };
      const other = await call({ name: 'delete_section', arguments: { id: b.id }, requestState: state, inputResponses: accept });
      assert.equal(other.json.result.isError, true);
      assert.equal(other.json.result.structuredContent.code, 'mcp.confirmation_invalid');
      assert.equal(await deletedAt(b.id), null);
      for (const tampered of [changedBitVariant(state), withSignature(state, spareBitsVariant(signatureOf(state)))]) {
        const refused = await call({ name: 'delete_section', arguments: { id: a.id }, requestState: tampered, inputResponses: accept });
        assert.equal(refused.json.result.structuredContent?.code, 'mcp.confirmation_invalid', tampered);
      }
      assert.equal(await deletedAt(a.id), null);
      const ok = await call({ name: 'delete_section', arguments: { id: a.id }, requestState: state, inputResponses: accept });
      assert.equal(ok.json.result._meta['atrium/status'], 204);
      const replay = await call({ name: 'delete_section', arguments: { id: a.id }, requestState: state, inputResponses: accept });
      assert.equal(replay.json.result.structuredContent.code, 'mcp.confirmation_invalid');
    });

    test('a client without elicitation (and any 2025 client) gets a one-time confirmation_token; the first call does nothing', async () => {
      for (const era of ['modern', 'legacy'] as const) {
        const section = await t.make.section(org);
        const client = await connectMcp(t, org, { credential: c.key, era });
        const tool = (await client.listTools()).tools.find((x) => x.name === 'delete_section')!;
        assert.equal((tool.inputSchema.properties as any).confirmation_token.type, 'string');
        assert.ok(!(tool.inputSchema.required ?? []).includes('confirmation_token'));
        const first: any = await client.callTool({ name: 'delete_section', arguments: { id: section.id } });
        assert.equal(first.isError, false);
        assert.deepEqual(Object.keys(first.structuredContent).sort(), ['confirmation_required', 'confirmation_token', 'effect', 'expires_at']);
        assert.equal(first.structuredContent.confirmation_required, true);
        assert.match(first.structuredContent.effect, /^This will delete a section: DELETE \/api\/v1\/sections\//);
        assert.ok(Math.abs(Date.parse(first.structuredContent.expires_at) - Date.now() - 5 * 60_000) < 10_000);
        assert.equal(await deletedAt(section.id), null, 'nothing done yet');
        const token = first.structuredContent.confirmation_token;
        const done: any = await client.callTool({ name: 'delete_section', arguments: { id: section.id, confirmation_token: token } });
        assert.equal(statusOf(done), 204, era);
        const again: any = await client.callTool({ name: 'delete_section', arguments: { id: section.id, confirmation_token: token } });
        assert.equal(again.isError, true);
        assert.equal(again.structuredContent.status, 422);
        assert.equal(again.structuredContent.code, 'mcp.confirmation_invalid');
        await client.close();
      }
    });

    test('a wrong token, or one for other arguments, another tool or another person, is refused and nothing is done', async () => {
      const [a, b] = [await t.make.section(org), await t.make.section(org)];
      const client = await connectMcp(t, org, { credential: c.key });
      const tokenFor = async (name: string, args: Record<string, unknown>, as: Client = client) => ((await as.callTool({ name, arguments: args })) as any).structuredContent.confirmation_token as string;
      const colleague = await t.make.caller({ org });
      const colleagueClient = await connectMcp(t, org, { credential: colleague.key });
      const cases: Array<[string, string]> = [
        ['wrong', 'atr_cf_not-a-token'],
        ['other arguments', await tokenFor('delete_section', { id: a.id })],
        ['other tool', await tokenFor('delete_course', { id: (await t.make.course(org)).id })],
        ['other person', await tokenFor('delete_section', { id: b.id }, colleagueClient)],
      ];
      for (const [what, token] of cases) {
        const res: any = await client.callTool({ name: 'delete_section', arguments: { id: b.id, confirmation_token: token } });
        assert.equal(res.structuredContent.code, 'mcp.confirmation_invalid', what);
      }
      assert.equal(await deletedAt(b.id), null);
      await client.close();
      await colleagueClient.close();
    });
  });

  describe('refusals', () => {
    test('a plan without the API entitlement: every MCP request is a 412 commerce.plan_entitlement', async () => {
      const poor = await t.make.caller({ plan: 'no-api' });
      for (const headers of [{}, { authorization: `Bearer ${poor.key}` }] as Array<Record<string, string>>) {
        const res = await postMcp(t, poor.org, '{"jsonrpc":"2.0","id":1,"method":"tools/list"}', headers);
        assert.equal(res.status, 412);
        assert.equal(res.json.code, 'commerce.plan_entitlement');
        assert.equal(res.json.category, 'precondition');
      }
    });

    test('an unknown address is a 404 tenancy.unknown_organisation', async () => {
      const res = await loopbackFetch(`${t.originOf('nobody.localhost')}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      assert.equal(res.status, 404);
      assert.equal(((await res.json()) as any).code, 'tenancy.unknown_organisation');
    });

    test('a key of another organisation, and access tokens for another resource or organisation, are a 401', async () => {
      const stranger = await t.make.caller();
      const apiToken = (await t.make.accessToken(org, c.personId, ['courses:read'])).token;
      for (const credential of [stranger.key, apiToken, (await t.make.accessToken(stranger.org, stranger.personId)).token]) {
        const res = await postMcp(t, org, '{"jsonrpc":"2.0","id":1,"method":"tools/list"}', { authorization: `Bearer ${credential}` });
        assert.equal(res.status, 401);
        assert.equal(res.json.code, 'auth.invalid_credential');
      }
    });

    test('an access token for {origin}/mcp is accepted here and refused by the REST API', async () => {
      const client = await t.app.services.oauthClients.create(org.id, null, { name: 'mcp machine', type: 'confidential', redirect_uris: [], grant_types: ['client_credentials'], scopes: ['courses:read'], service_person_id: c.personId });
      const res = await t.app.inject({
        method: 'POST',
        url: '/oauth/token',
        headers: { host: org.address, 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}` },
        payload: new URLSearchParams({ grant_type: 'client_credentials', resource: `${t.originOf(org.address)}/mcp` }).toString(),
      });
      const token = JSON.parse(res.body).access_token as string;
      const mcp = await connectMcp(t, org, { credential: token });
      assert.deepEqual((await mcp.listTools()).tools.map((x) => x.name).sort(), tools.filter((x) => !x.op.destructive && (x.op.scope === null || x.op.scope === 'courses:read')).map((x) => x.name).sort());
      const me: any = await mcp.callTool({ name: 'get_me', arguments: {} });
      assert.equal(me.structuredContent.subject.person_id, c.personId);
      await mcp.close();
      assert.equal((await t.api.request({ host: org.address, key: token, path: '/me' })).status, 401);
    });
  });

  describe('bad input: the protocol’s error or an isError problem document, never a 500, nothing changes', () => {
    const auth = () => ({ authorization: `Bearer ${c.key}` });
    const courses = async () => (await t.database.db.selectFrom('courses').select('id').where('organisation_id', '=', org.id).execute()).length;

    test('malformed JSON-RPC, a batch of many calls, unknown methods, arguments that are not an object', async () => {
      const before = await courses();
      const create = (i: number) => ({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'create_course', arguments: { fullname: 'Batch', shortname: `B${i}` } } });
      const cases: Array<[string, number, number]> = [
        ['{not json', 400, -32700],
        [JSON.stringify(Array.from({ length: 200 }, (_, i) => create(i))), 400, -32600],
        ['{"jsonrpc":"2.0","id":1,"method":"resources/destroy_everything"}', 200, -32601],
        ['{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_course","arguments":"fullname"}}', 200, -32602],
        ['{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"drop_database","arguments":{}}}', 200, -32602],
        ['"just a string"', 400, -32600],
      ];
      for (const [body, status, code] of cases) {
        const res = await postMcp(t, org, body, auth());
        assert.ok(res.status < 500, body.slice(0, 40));
        assert.equal(res.status, status, `${body.slice(0, 40)} → ${res.text.slice(0, 200)}`);
        assert.equal(res.json?.error?.code, code, body.slice(0, 40));
      }
      assert.equal(await courses(), before);
    });

    test('the body is read as JSON-RPC whatever its declared type: JSON with a charset is served, a text body that is not JSON is the parse error', async () => {
      const list = '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}';
      const modern = { ...auth(), 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' };
      for (const type of ['application/json', 'application/json; charset=utf-8', 'application/json;charset=UTF-8']) {
        const res = await postMcp(t, org, list, { ...modern, 'content-type': type });
        assert.equal(res.status, 200, `${type} → ${res.text.slice(0, 200)}`);
        assert.ok(Array.isArray(res.json?.result?.tools), type);
      }
      for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
        const res = await postMcp(t, org, '{not json', { ...auth(), 'content-type': type });
        assert.equal(res.status, 400, type);
        assert.equal(res.json?.error?.code, -32700, type);
      }
    });

    test('arguments that fail the schema: a 422 problem document naming each field by its pointer', async () => {
      const section = await t.make.section(org, { title: 'Kept' });
      const client = await connectMcp(t, org, { credential: c.key });
      const cases: Array<[string, Record<string, unknown>, string, string[]]> = [
        ['update_section', { id: section.id, title: '', colour: 'red' }, 'validation.invalid_body', ['/colour', '/title']],
        ['update_section', { title: 'No id' }, 'mcp.invalid_arguments', ['/id']],
        ['update_section', { id: { not: 'a string' } }, 'mcp.invalid_arguments', ['/id']],
        ['get_section', { id: section.id, colour: 'red' }, 'mcp.invalid_arguments', ['/colour']],
        ['list_sections', { limit: { many: true } }, 'mcp.invalid_arguments', ['/limit']],
      ];
      for (const [name, args, code, pointers] of cases) {
        const res: any = await client.callTool({ name, arguments: args });
        assert.equal(res.isError, true, JSON.stringify(args));
        assert.equal(res.structuredContent.status, 422);
        assert.equal(res.structuredContent.code, code, JSON.stringify(args));
        assert.deepEqual(res.structuredContent.errors.map((e: { path: string }) => e.path).sort(), pointers);
      }
      const query: any = await client.callTool({ name: 'list_sections', arguments: { limit: 5000 } });
      assert.equal(query.structuredContent.code, 'validation.invalid_parameter');
      assert.equal((await t.app.services.sections.get(t.app.db, org.id, section.id)).title, 'Kept');
      await client.close();
    });
  });
});
