// Each server process caches the credentials it verified (src/access/credential-epoch.ts). A change that affects
// authentication, made through any process, must still be refused on the other processes' very next request.
// Two apps on one database, each with its own connection and caches, stand for two server processes; the
// CLI runs as a real third process. On SQLite and, with TEST_DATABASE_URL, on PostgreSQL.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.ts';
import { bumpCredentialEpoch } from '../src/access/credential-epoch.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase, type Database } from '../src/db/database.ts';
import { sqliteFileFor } from '../src/runtime.ts';
import { createApiClient, type ApiClient } from './support/api-client.ts';
import type { Caller } from './support/factories.ts';
import { startTestApp, type TestContext } from './support/harness.ts';

const root = path.join(import.meta.dirname, '..');

/** The `atrium` command as a real process on the test app's database. */
function runCli(env: Record<string, string>, args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'src/cli/main.ts'), ...args], { env: { PATH: process.env.PATH ?? '', ...env } });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('cached credentials across processes', () => {
  let a: TestContext;
  let other: { app: FastifyInstance; database: Database; api: ApiClient };
  before(async () => {
    a = await startTestApp();
    // The second "process": its own configuration, database handle, services and caches, on a's database.
    const config = loadConfig(a.processEnv);
    const database = openDatabase({ databaseUrl: config.databaseUrl, sqliteFile: sqliteFileFor(config) });
    const app = await buildApp({ config, database, clock: a.clock, logger: false });
    other = { app, database, api: createApiClient(app) };
  });
  after(async () => {
    await other.app.close();
    await other.database.close();
    await a.close();
  });

  const me = (api: ApiClient, c: Caller) => api.request({ host: c.org.address, key: c.key, path: '/me' });

  /** Both apps have verified (and so cached) the caller's key. */
  async function warm(c: Caller): Promise<void> {
    assert.equal((await me(a.api, c)).status, 200);
    assert.equal((await me(other.api, c)).status, 200);
  }

  test('an OAuth access token revoked (RFC 7009) or whose client is deleted through one app is refused by the other on its very next request', async () => {
    const revoked = await a.make.caller({ credential: 'oauth_token' });
    await warm(revoked);
    const { client_id } = await a.database.db.selectFrom('oauth_clients').select('client_id').where('id', '=', revoked.keyId).executeTakeFirstOrThrow();
    const secretless = await other.app.services.oauthClients.rotateSecret(revoked.org.id, revoked.keyId);
    const res = await other.app.inject({
      method: 'POST',
      url: '/oauth/revoke',
      headers: { host: revoked.org.address, 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client_id}:${secretless.client_secret}`).toString('base64')}` },
      payload: new URLSearchParams({ token: revoked.key }).toString(),
    });
    assert.equal(res.statusCode, 200);
    assert.equal((await me(a.api, revoked)).status, 401, 'refused by the app that had it cached');

    const deleted = await a.make.caller({ credential: 'oauth_token' });
    await warm(deleted);
    assert.equal(await other.app.services.oauthClients.remove(deleted.org.id, deleted.keyId), true);
    assert.equal((await me(a.api, deleted)).status, 401);
  });

  test('a key revoked through one app is refused by the other on its very next request', async () => {
    const c = await a.make.caller();
    await warm(c);
    assert.equal(await other.app.services.apiKeys.revoke(c.org.id, c.keyId), true);
    for (const api of [a.api, other.api]) {
      const res = await me(api, c);
      assert.equal(res.status, 401);
      assert.equal(res.body.code, 'auth.revoked_credential');
    }
  });

  test('a key revoked through the other app: the next read and write on this app are refused, and the write changes nothing', async () => {
    // On PostgreSQL this app checks its cached organisation with the request's first statement (src/http/tenancy-cache.ts):
    // the read and the write have run their statements when the check fails, and must be answered as refused.
    const c = await a.make.caller();
    const section = await a.make.section(c.org);
    const path = `/sections/${section.id}`;
    assert.equal((await a.api.request({ host: c.org.address, key: c.key, path })).status, 200);
    assert.equal(await other.app.services.apiKeys.revoke(c.org.id, c.keyId), true);
    const read = await a.api.request({ host: c.org.address, key: c.key, path });
    assert.equal(read.status, 401);
    assert.equal(read.body.code, 'auth.revoked_credential');

    const d = await a.make.caller({ org: c.org });
    assert.equal((await a.api.request({ host: c.org.address, key: d.key, path })).status, 200);
    assert.equal(await other.app.services.apiKeys.revoke(c.org.id, d.keyId), true);
    const write = await a.api.request({ host: c.org.address, key: d.key, method: 'PATCH', path, body: { title: 'Written with a revoked key' } });
    assert.equal(write.status, 401);
    assert.equal(write.body.code, 'auth.revoked_credential');
    const after = await a.database.db.selectFrom('sections').select('title').where('id', '=', section.id).executeTakeFirstOrThrow();
    assert.notEqual(after.title, 'Written with a revoked key');
  });

  test('a create that reads nothing first (its organisation check rides with its COMMIT) with a key revoked through the other app is refused, and nothing is created', async () => {
    // On PostgreSQL POST /courses sends BEGIN, the organisation check, the insert, its event, its audit entry and
    // COMMIT in one write: the check is stated in SQL, so its failure aborts the transaction before it commits.
    const c = await a.make.caller();
    await warm(c);
    for (const headers of [{}, { 'idempotency-key': `revoked-${crypto.randomUUID()}` }] as Array<Record<string, string>>) {
      const d = await a.make.caller({ org: c.org });
      assert.equal((await a.api.request({ host: c.org.address, key: d.key, path: '/courses' })).status, 200);
      assert.equal(await other.app.services.apiKeys.revoke(c.org.id, d.keyId), true);
      const shortname = `REVOKED-${crypto.randomUUID().slice(0, 8)}`;
      const write = await a.api.request({ host: c.org.address, key: d.key, method: 'POST', path: '/courses', headers, body: { fullname: 'Created with a revoked key', shortname } });
      assert.equal(write.status, 401);
      assert.equal(write.body.code, 'auth.revoked_credential');
      assert.equal(await a.database.db.selectFrom('courses').select('id').where('shortname', '=', shortname).executeTakeFirst(), undefined);
    }
    // And a valid key's create after it goes through on the organisation as it is now.
    assert.equal((await a.api.request({ host: c.org.address, key: c.key, method: 'POST', path: '/courses', body: { fullname: 'Created after', shortname: `AFTER-${crypto.randomUUID().slice(0, 8)}` } })).status, 201);
  });

  /** A 2026-07-28 tools/call to `app`'s /mcp with `c`'s key. */
  function callTool(app: FastifyInstance, c: Caller, name: string, args: Record<string, unknown>) {
    const envelope = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'test', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
    return app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { host: c.org.address, authorization: `Bearer ${c.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': name },
      payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args, _meta: envelope } }),
    });
  }

  test('MCP: a key revoked through the other app is an HTTP 401 on the next tool call here, read or write, and the write changes nothing', async () => {
    // On PostgreSQL /mcp starts a tool call from its cached organisation, whose check rides with the call's first
    // statement (src/mcp/mcp-routes.ts): the call has run when the check fails, and its answer must not be sent.
    const c = await a.make.caller();
    const section = await a.make.section(c.org);
    for (const [name, args] of [['get_section', { id: section.id }], ['update_section', { id: section.id, title: 'Written with a revoked key' }]] as const) {
      const d = await a.make.caller({ org: c.org });
      assert.equal((await callTool(a.app, d, 'get_section', { id: section.id })).statusCode, 200);
      assert.equal(await other.app.services.apiKeys.revoke(c.org.id, d.keyId), true);
      const res = await callTool(a.app, d, name, args);
      assert.equal(res.statusCode, 401, `${name}: ${res.body}`);
      assert.equal(res.json().code, 'auth.revoked_credential');
      assert.match(String(res.headers['www-authenticate']), /resource_metadata=.*error="invalid_token"/);
    }
    const after = await a.database.db.selectFrom('sections').select('title').where('id', '=', section.id).executeTakeFirstOrThrow();
    assert.notEqual(after.title, 'Written with a revoked key');
  });

  test('MCP: after the organisation changed through the other app, a valid key’s tool call runs once, on the organisation as it is now', async () => {
    const c = await a.make.caller();
    const section = await a.make.section(c.org);
    assert.equal((await callTool(a.app, c, 'get_section', { id: section.id })).statusCode, 200);
    assert.ok(await other.app.services.organisations.update(c.org.address, { name: `Renamed ${crypto.randomUUID().slice(0, 8)}` }));
    const res = await callTool(a.app, c, 'update_section', { id: section.id, title: 'Written once' });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().result._meta['atrium/status'], 200);
    const events = await a.database.db.selectFrom('outbox_events').select('id').where('organisation_id', '=', c.org.id).where('type', '=', 'section.updated').execute();
    assert.equal(events.length, 1, 'one update, one event');
    // And switched off through the other app: the next call here is refused as /mcp refuses, a problem document.
    await other.app.services.mcpSettings.save(c.org.id, { enabled: false, allowSelfRegistration: true, toolsOn: [] });
    const off = await callTool(a.app, c, 'get_section', { id: section.id });
    assert.equal(off.statusCode, 404);
    assert.equal(off.json().code, 'mcp.disabled');
  });

  test('a key revoked by the CLI, another process, is refused on the next request', async () => {
    const c = await a.make.caller();
    await warm(c);
    const run = await runCli(a.processEnv, ['api-key', 'revoke', '--org', c.org.address, '--id', c.keyId]);
    assert.equal(run.code, 0, run.stderr);
    const res = await me(a.api, c);
    assert.equal(res.status, 401);
    assert.equal(res.body.code, 'auth.revoked_credential');
  });

  test("a person removed through the other app: their key is refused on this app's next request", async () => {
    const c = await a.make.caller();
    await warm(c);
    assert.equal(await other.app.services.people.remove(c.org.id, c.personId), true);
    const res = await me(a.api, c);
    assert.equal(res.status, 401);
    assert.equal(res.body.code, 'auth.revoked_credential');
  });

  test('a plan changed through the other app applies to the next request', async () => {
    const c = await a.make.caller();
    await warm(c);
    const create = () => a.api.request({ host: c.org.address, key: c.key, method: 'POST', path: '/courses', body: { fullname: 'Plan test', shortname: `PT-${Date.now()}` } });
    assert.equal((await create()).status, 201);
    await other.app.services.organisations.update(c.org.address, { plan: 'no-api' });
    const refused = await create();
    assert.equal(refused.status, 412);
    assert.equal(refused.body.code, 'commerce.plan_entitlement');
    assert.equal((await me(a.api, c)).status, 200, 'reads stay available');
  });

  test('a changed role, committed with a bump of the epoch, applies on the next request', async () => {
    const c = await a.make.caller({ roles: ['admin'], platformAdmin: false });
    const hooks = () => a.api.request({ host: c.org.address, key: c.key, path: '/webhook_subscriptions' });
    assert.equal((await hooks()).status, 200);
    // How a change to a person's roles must be written (and how people and OAuth changes will be): the change
    // and the bump in one transaction, through any process.
    await other.database.db.transaction().execute(async (tx) => {
      await tx.updateTable('people').set({ roles: JSON.stringify(['teacher']) }).where('id', '=', c.personId).execute();
      await bumpCredentialEpoch(tx, c.org.id);
    });
    const res = await hooks();
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'auth.missing_capability');
  });

  test("MCP settings saved through one app apply on the other's very next MCP request (they are cached under the epoch)", async () => {
    const c = await a.make.caller();
    const envelope = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'test', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
    async function toolsList(app: FastifyInstance): Promise<{ status: number; names: string[]; code?: string }> {
      const res = await app.inject({
        method: 'POST',
        url: '/mcp',
        headers: { host: c.org.address, authorization: `Bearer ${c.key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
        payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope } }),
      });
      const body = res.json();
      return { status: res.statusCode, names: (body.result?.tools ?? []).map((tool: { name: string }) => tool.name), code: body.code };
    }
    for (const app of [a.app, other.app]) assert.ok((await toolsList(app)).names.includes('get_section'), 'the defaults, read (and cached) by both');

    await other.app.services.mcpSettings.save(c.org.id, { enabled: true, allowSelfRegistration: true, toolsOn: ['get_me'], toolsKnown: (await toolsList(a.app)).names });
    assert.deepEqual((await toolsList(a.app)).names, ['get_me'], "the app that had the old settings cached applies the other's at once");

    await a.app.services.mcpSettings.save(c.org.id, { enabled: false, allowSelfRegistration: true, toolsOn: ['get_me'] });
    assert.deepEqual(await toolsList(other.app), { status: 404, names: [], code: 'mcp.disabled' });
  });
});
