// What a start loads (docs/operating.md#memory): the real server process, started as production starts it
// (`bin/atrium.js serve`) with the default configuration on SQLite, loads exactly the packages listed here, so
// that an import added anywhere cannot silently bring back what this deployment does not use (the PostgreSQL
// driver, Redis, SMTP, Prometheus) or what only some requests need (the OAuth server, the MCP SDK). The
// packages come from the process itself (testkit/process-probe.ts, loaded with --import). A surface's
// packages then load with its first request, which is answered as always.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServerProcess, type ServerProcess } from './support/server-process.ts';
import { until } from './support/wait.ts';
import { PROBE_ARGS, askProbe } from '../testkit/probe.ts';
import { productionNodeFlags, startCommands } from '../testkit/start-commands.ts';
import { createTestDatabase, testDatabaseUrl } from './support/harness.ts';
import { loopbackFetch } from './support/oauth.ts';

const atrium = path.join(import.meta.dirname, '..', 'bin', 'atrium.js');

/** Every package a default start loads. A change here is a change in what every deployment pays for at rest. */
const AT_START = [
  '@fastify/accept-negotiator', '@fastify/ajv-compiler', '@fastify/cookie', '@fastify/csrf',
  '@fastify/csrf-protection', '@fastify/error', '@fastify/fast-json-stringify-compiler', '@fastify/formbody',
  '@fastify/forwarded', '@fastify/helmet', '@fastify/merge-json-schemas', '@fastify/proxy-addr',
  '@fastify/rate-limit', '@fastify/send', '@fastify/static', '@fastify/view', '@lukeed/ms', '@pinojs/redact',
  '@stablelib/base64', 'ajv', 'ajv-formats', 'atomic-sleep', 'avvio', 'close-with-grace', 'content-disposition',
  'cookie', 'depd', 'dequal', 'escape-html', 'eta', 'fast-decode-uri-component', 'fast-deep-equal',
  'fast-json-stringify', 'fast-querystring', 'fast-sha256', 'fast-uri', 'fastify', 'fastify-plugin', 'fastq',
  'find-my-way', 'fractional-indexing', 'glob', 'helmet', 'http-errors', 'inherits', 'ip-address', 'ipaddr.js',
  'json-schema-ref-resolver', 'json-schema-traverse', 'kysely', 'mime', 'on-exit-leak-free', 'pino',
  'pino-std-serializers', 'process-warning', 'quick-format-unescaped', 'ret', 'reusify', 'rfdc', 'safe-regex2',
  'safe-stable-stringify', 'secure-json-parse', 'semver', 'setprototypeof', 'sonic-boom', 'standardwebhooks',
  'statuses', 'thread-stream', 'toad-cache', 'toidentifier', 'typebox', 'uuid',
];

/** Never at start on SQLite without REDIS_URL, SMTP_URL or METRICS_PORT, and before the first OAuth or MCP request. */
const NOT_AT_START = ['pg', 'ioredis', 'nodemailer', 'prom-client', 'oidc-provider', '@modelcontextprotocol/server', 'zod', 'koa'];

/** The PostgreSQL driver's packages, loaded at start when DATABASE_URL names PostgreSQL. */
const POSTGRES = ['pg', 'pg-connection-string', 'pg-int8', 'pg-pool', 'pg-protocol', 'pg-types', 'postgres-array', 'postgres-bytea', 'postgres-date', 'postgres-interval', 'xtend'];

async function startProbed(env: Record<string, string>): Promise<{ server: ServerProcess; url: string }> {
  const server = startServerProcess(env, [...productionNodeFlags(), ...PROBE_ARGS, atrium, 'serve'], { ipc: true });
  const url = await server.url;
  await until(async () => (await fetch(`${url}/readyz`)).status === 200, 'the server to be ready', 30_000);
  return { server, url };
}

const loaded = async (server: ServerProcess) => (await askProbe(server.child)).packages;

describe('a default start on SQLite', () => {
  let dir: string;
  let server: ServerProcess;
  let url: string;
  let apiKey: string;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'atrium-start-'));
    // The default configuration: a data directory and a port, nothing else (DEV_BOOTSTRAP included, as it is by default).
    ({ server, url } = await startProbed({ DATA_DIR: dir, DEV_BOOTSTRAP: 'true' }));
    apiKey = /API key:\s+(\S+)/.exec(server.output.map((o) => o.line).join('\n'))?.[1] ?? assert.fail('the development API key was not printed');
  });
  after(async () => {
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('loads exactly the packages of the list, and none that this deployment does not use', async () => {
    const packages = await loaded(server);
    assert.deepEqual(
      NOT_AT_START.filter((name) => packages.includes(name)),
      [],
      'loaded at start although the configuration does not use it and no request asked for it',
    );
    assert.deepEqual(packages, AT_START);
  });

  test('the OAuth server and the MCP SDK load with their first request, which is answered as always', async () => {
    const origin = `http://localhost:${new URL(url).port}`;
    const metadata = await loopbackFetch(`${origin}/.well-known/oauth-authorization-server`);
    assert.equal(metadata.status, 200);
    assert.match(((await metadata.json()) as { issuer: string }).issuer, /^http:\/\/localhost:/);
    assert.ok((await loaded(server)).includes('oidc-provider'));
    assert.ok(!(await loaded(server)).includes('@modelcontextprotocol/server'), 'the MCP SDK waits for an MCP request');

    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'test', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
    const list = await loopbackFetch(`${origin}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta } }),
    });
    assert.equal(list.status, 200);
    const tools = ((await list.json()) as { result: { tools: Array<{ name: string }> } }).result.tools;
    assert.ok(tools.some((t) => t.name === 'get_section'));
    assert.ok((await loaded(server)).includes('@modelcontextprotocol/server'));
  });
});

describe('a start on PostgreSQL', { skip: testDatabaseUrl === undefined && 'TEST_DATABASE_URL is not set' }, () => {
  test('loads the PostgreSQL driver, and otherwise what a SQLite start loads', async () => {
    const database = await createTestDatabase('postgres');
    const { server } = await startProbed(database.env);
    try {
      assert.deepEqual(await loaded(server), [...new Set([...AT_START, ...POSTGRES])].sort());
    } finally {
      await server.stop();
      await database.drop();
    }
  });
});

test('every documented start runs node itself (never npm as a resident parent), with the same memory flags', () => {
  const flags = productionNodeFlags();
  assert.deepEqual(flags, ['--max-semi-space-size=4', '--max-old-space-size=256'], `production's flags: ${flags.join(' ')}`);
  for (const [where, words] of Object.entries(startCommands())) {
    assert.match(words[0] ?? '', /(^|\/)node$/, `${where} runs node itself`);
    assert.deepEqual(words.filter((w) => w.startsWith('--')), flags, `${where} starts node with production's flags`);
  }
});
