// What a server process writes: its logger's JSON lines and nothing else. A library that prints to the console
// (oidc-provider's NOTICE about a default policy, say) would mix prose into a log that is read as JSON lines,
// so a real process (`node src/main.ts`, default configuration) is put through the OAuth endpoints and every
// line it wrote, on stdout and stderr, is checked.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestContext } from './support/harness.ts';
import { loopbackFetch } from './support/oauth.ts';
import { startServerProcess } from './support/server-process.ts';
import { until } from './support/wait.ts';

describe('console output of a server process', () => {
  let t: TestContext;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  test('exercising OAuth (metadata, tokens, revocation, an error page, CORS) writes nothing but JSON log lines, and no NOTICE', { timeout: 60_000 }, async () => {
    const org = await t.make.org();
    const person = await t.make.person(org, { roles: ['admin'] });
    const create = (name: string) =>
      t.app.services.oauthClients.create(org.id, person.id, { name, type: 'confidential', redirect_uris: [], grant_types: ['client_credentials'], scopes: ['courses:read'], service_person_id: person.id }) as Promise<{ client_id: string; client_secret: string }>;
    const [mine, theirs] = [await create('Nightly sync'), await create('Other sync')];
    const server = startServerProcess(t.processEnv);
    try {
      const base = await server.url;
      await until(async () => (await fetch(`${base}/readyz`)).status === 200, 'the server to be ready', 30_000);
      const origin = `http://${org.address}:${new URL(base).port}`;
      const send = (path: string, init: RequestInit = {}) => loopbackFetch(`${origin}${path}`, init);
      const form = (client: { client_id: string; client_secret: string }, body: Record<string, string>): RequestInit => ({
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}` },
        body: new URLSearchParams(body).toString(),
      });

      for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration', '/.well-known/oauth-protected-resource/mcp', '/oauth/jwks']) assert.equal((await send(path)).status, 200, path);
      const token = (async (client: typeof mine) => ((await (await send('/oauth/token', form(client, { grant_type: 'client_credentials' }))).json()) as { access_token: string }).access_token);
      const [myToken, theirToken] = [await token(mine), await token(theirs)];
      assert.equal((await send('/oauth/revoke', form(mine, { token: theirToken }))).status, 400, 'another client’s token');
      assert.equal((await send('/oauth/revoke', form(mine, { token: myToken }))).status, 200, 'its own');
      assert.equal((await send('/oauth/introspect', form(mine, { token: theirToken }))).status, 200);
      assert.equal((await send('/oauth/authorize?client_id=nobody&response_type=code')).status, 400);
      assert.equal((await send('/oauth/register', { method: 'OPTIONS', headers: { origin: 'https://spa.example', 'access-control-request-method': 'POST' } })).status, 204);
      assert.equal((await send('/oauth/token', { method: 'OPTIONS' })).status, 404);
    } finally {
      assert.equal(await server.stop('SIGTERM'), 0);
    }
    assert.ok(server.output.length > 0, 'the process logged');
    for (const { stream, line } of server.output) {
      assert.doesNotMatch(line, /NOTICE/, `${stream}: ${line}`);
      let entry: Record<string, unknown> | undefined;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        assert.fail(`${stream} holds a line that is not a JSON log line: ${line}`);
      }
      assert.equal(typeof entry.level, 'number', `${stream}: ${line}`);
      assert.equal(typeof entry.msg, 'string', `${stream}: ${line}`);
    }
  });
});
