// `npm run bench:memory`: what the service costs to keep running (bench/README.md#memory-at-rest-and-under-load).
// For each database (SQLite always; PostgreSQL when it answers) it prepares a database with the `atrium`
// command, then starts the service as production does, `node bin/atrium.js serve` with the default
// configuration and production's `node` flags, several times: each time it records the process's memory right after /readyz turns 200 and
// the time of the first request to each surface (the order turns from start to start, so no surface always
// comes first). The last start is then warmed up on every surface and soaked with reads, lists and PATCHes.
// Memory comes from inside the server process through testkit/process-probe.ts (loaded with --import), which
// also names the packages loaded at start.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import readline from 'node:readline';
import autocannon, { type RequestData } from 'autocannon';
import { postgresTarget, sqliteTarget, type DatabaseTarget } from './databases.ts';
import { readSettings } from './settings.ts';
import { mcpHeaders, mcpMessage } from './mcp-call.ts';
import { PROBE_ARGS, askProbe, type ProbeReply } from '../testkit/probe.ts';
import { productionNodeFlags } from '../testkit/start-commands.ts';

const atrium = path.join(import.meta.dirname, '..', 'bin', 'atrium.js');
const settings = readSettings();
const number = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const starts = number('MEMORY_STARTS', 5);
const soakSeconds = number('MEMORY_SOAK_SECONDS', 60);
const soakConnections = number('MEMORY_CONNECTIONS', 32);
/** The server's `node` flags: production's (deploy/atrium-api@.service), unless MEMORY_NODE_ARGS says otherwise ('' for none). */
const nodeArgs = process.env.MEMORY_NODE_ARGS !== undefined ? process.env.MEMORY_NODE_ARGS.split(' ').filter(Boolean) : productionNodeFlags();
const HOST = 'localhost';
const SECTIONS = 200;
const log = (text: string) => process.stderr.write(text + '\n');
const mb = (bytes: number) => Math.round(bytes / 1e5) / 10;

// ---- the service's environment: the default configuration, on this target's database -------------------

/**
 * The server's and the CLI's environment: where the data is, an ephemeral port, and the per-credential limits
 * raised so that the soak's 32 connections on one API key are served rather than refused (neither changes
 * what is loaded). Everything else is the default configuration.
 */
function serviceEnv(target: DatabaseTarget): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', PORT: '0', RATE_LIMIT_PER_MINUTE: '100000000', CONCURRENCY_LIMIT: '1000' };
  if (target.env.DATA_DIR) env.DATA_DIR = target.env.DATA_DIR;
  else env.DATABASE_URL = `${target.env.BENCH_DATABASE_URL}${target.env.BENCH_DATABASE_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${target.env.BENCH_PG_SCHEMA}`)}`;
  return env;
}

function cli(env: Record<string, string>, ...args: string[]): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [atrium, ...args, '--json'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (err += d));
    child.once('exit', (code) => (code === 0 ? resolve(out.trim() ? (JSON.parse(out) as Record<string, string>) : {}) : reject(new Error(`atrium ${args.join(' ')}: ${err || out}`))));
  });
}

interface Fixture {
  key: string;
  clientId: string;
  clientSecret: string;
  sectionIds: string[];
}

// ---- requests -------------------------------------------------------------------------------------------

interface Answer {
  status: number;
  body: string;
  ms: number;
}

/** One request on a new connection, to the organisation's address, timed to its last byte. */
function send(port: number, method: string, url: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: url, agent: false, headers: { host: HOST, ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, ms: performance.now() - started }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const bearer = (f: Fixture) => ({ authorization: `Bearer ${f.key}` });
const json = { 'content-type': 'application/json' };
const mcpBody = (method: string, params: Record<string, unknown> = {}) => JSON.stringify(mcpMessage(method, params));

/** The first request to each surface after a start; each must answer 200. */
const surfaces: Array<{ name: string; request: (port: number, f: Fixture) => Promise<Answer> }> = [
  { name: 'REST `GET /api/v1/sections/{id}`', request: (port, f) => send(port, 'GET', `/api/v1/sections/${f.sectionIds[0]}`, bearer(f)) },
  { name: 'page `GET /login`', request: (port) => send(port, 'GET', '/login') },
  { name: 'OAuth `GET /.well-known/oauth-authorization-server`', request: (port) => send(port, 'GET', '/.well-known/oauth-authorization-server') },
  { name: 'MCP `tools/list`', request: (port, f) => send(port, 'POST', '/mcp', { ...bearer(f), ...mcpHeaders('tools/list') }, mcpBody('tools/list')) },
  { name: 'reference `GET /api/v1/docs`', request: (port) => send(port, 'GET', '/api/v1/docs') },
  { name: 'OpenAPI `GET /api/v1/openapi.json`', request: (port) => send(port, 'GET', '/api/v1/openapi.json') },
  { name: 'error page `GET /docs/errors/auth.missing_credential`', request: (port) => send(port, 'GET', '/docs/errors/auth.missing_credential') },
];

async function ok(what: string, answer: Promise<Answer>): Promise<Answer> {
  const a = await answer;
  if (a.status < 200 || a.status >= 300) throw new Error(`${what} answered ${a.status}: ${a.body.slice(0, 300)}`);
  return a;
}

// ---- the server process ---------------------------------------------------------------------------------

interface Running {
  child: ChildProcess;
  port: number;
  /** Milliseconds from spawn to /readyz 200. */
  readyMs: number;
  stop(): Promise<void>;
}

async function startService(env: Record<string, string>): Promise<Running> {
  const started = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, ...PROBE_ARGS, atrium, 'serve'], { env, stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    void exited.then(() => reject(new Error('the server exited before it listened')));
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      const entry = JSON.parse(line) as { msg?: string; address?: string };
      if (entry.msg === 'atrium listening') resolve(Number(new URL(entry.address!).port));
    });
  });
  for (;;) {
    if ((await send(port, 'GET', '/readyz')).status === 200) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    child,
    port,
    readyMs: performance.now() - started,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

// ---- the steps ------------------------------------------------------------------------------------------

async function prepare(env: Record<string, string>): Promise<Omit<Fixture, 'sectionIds'>> {
  await cli(env, 'migrate');
  await cli(env, 'org', 'create', '--address', HOST, '--name', 'Memory bench');
  await cli(env, 'person', 'create', '--org', HOST, '--email', 'admin@bench.test', '--name', 'Admin', '--roles', 'admin', '--password', randomBytes(12).toString('hex'));
  const { key } = await cli(env, 'api-key', 'create', '--org', HOST, '--person', 'admin@bench.test', '--scopes', 'courses:read,courses:write');
  const client = await cli(env, 'oauth-client', 'create', '--org', HOST, '--name', 'bench', '--type', 'confidential', '--grants', 'client_credentials', '--scopes', 'courses:read', '--person', 'admin@bench.test');
  return { key, clientId: client.client_id, clientSecret: client.client_secret };
}

async function seed(port: number, fixture: Omit<Fixture, 'sectionIds'>): Promise<string[]> {
  const auth = { ...json, authorization: `Bearer ${fixture.key}` };
  const course = JSON.parse((await ok('create course', send(port, 'POST', '/api/v1/courses', auth, JSON.stringify({ fullname: 'Memory', shortname: 'MEM' })))).body) as { id: string };
  const ids: string[] = [];
  for (let i = 0; i < SECTIONS; i++) {
    const section = await ok('create section', send(port, 'POST', '/api/v1/sections', auth, JSON.stringify({ course_id: course.id, title: `Week ${i}` })));
    ids.push((JSON.parse(section.body) as { id: string }).id);
  }
  return ids;
}

/** Touches every surface: REST reads and a list, a page, OAuth (metadata and a token), MCP, the reference and its assets, an error page. */
async function warmUp(port: number, f: Fixture): Promise<void> {
  for (let i = 0; i < 200; i++) await ok('read', send(port, 'GET', `/api/v1/sections/${f.sectionIds[i % f.sectionIds.length]}`, bearer(f)));
  await ok('list', send(port, 'GET', '/api/v1/sections?limit=50', bearer(f)));
  await ok('sign-in page', send(port, 'GET', '/login'));
  await ok('OAuth metadata', send(port, 'GET', '/.well-known/oauth-authorization-server'));
  const basic = `Basic ${Buffer.from(`${encodeURIComponent(f.clientId)}:${encodeURIComponent(f.clientSecret)}`).toString('base64')}`;
  await ok('OAuth token', send(port, 'POST', '/oauth/token', { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, 'grant_type=client_credentials&scope=courses:read'));
  await ok('MCP tools/list', send(port, 'POST', '/mcp', { ...bearer(f), ...mcpHeaders('tools/list') }, mcpBody('tools/list')));
  await ok('MCP tools/call', send(port, 'POST', '/mcp', { ...bearer(f), ...mcpHeaders('tools/call', 'get_section') }, mcpBody('tools/call', { name: 'get_section', arguments: { id: f.sectionIds[0] } })));
  const reference = await ok('reference', send(port, 'GET', '/api/v1/docs'));
  for (const [, asset] of reference.body.matchAll(/(?:src|href)="(\/docs\/assets\/[^"]+)"/g)) await ok(`asset ${asset}`, send(port, 'GET', asset, { 'accept-encoding': 'gzip' }));
  await ok('OpenAPI', send(port, 'GET', '/api/v1/openapi.json'));
  await ok('error page', send(port, 'GET', '/docs/errors/auth.missing_credential'));
  await ok('error index', send(port, 'GET', '/docs/errors'));
}

interface SoakResult {
  samples: Array<{ second: number; memory: NodeJS.MemoryUsage }>;
  requests: number;
  non2xx: number;
  errors: number;
}

/** soakConnections connections for soakSeconds: reads, lists and PATCHes, spread over the sections; memory every second. */
async function soak(running: Running, f: Fixture): Promise<SoakResult> {
  let n = 0;
  const headers = { host: HOST, ...bearer(f), ...json };
  const requests = [
    { method: 'GET' as const, path: '/api/v1/sections', headers, setupRequest: (r: RequestData) => ({ ...r, path: `/api/v1/sections/${f.sectionIds[n++ % SECTIONS]}` }) },
    { method: 'GET' as const, path: '/api/v1/sections?limit=20', headers },
    { method: 'PATCH' as const, path: '/api/v1/sections', headers, setupRequest: (r: RequestData) => ({ ...r, path: `/api/v1/sections/${f.sectionIds[n++ % SECTIONS]}`, body: JSON.stringify({ title: `Week ${n}` }) }) },
  ];
  const samples: SoakResult['samples'] = [];
  const started = performance.now();
  const timer = setInterval(() => void askProbe(running.child).then((r) => samples.push({ second: Math.round((performance.now() - started) / 1000), memory: r.memory })), 1000);
  const result = await autocannon({ url: `http://127.0.0.1:${running.port}`, connections: soakConnections, duration: soakSeconds, requests });
  clearInterval(timer);
  samples.push({ second: soakSeconds, memory: (await askProbe(running.child)).memory });
  return { samples, requests: result.requests.total, non2xx: result.non2xx, errors: result.errors };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];

// ---- one database ---------------------------------------------------------------------------------------

async function measure(target: DatabaseTarget): Promise<string> {
  const env = serviceEnv(target);
  const partial = await prepare(env);
  let fixture: Fixture | undefined;
  const atStart: ProbeReply[] = [];
  const readyMs: number[] = [];
  const firstMs = new Map<string, number[]>(surfaces.map((s) => [s.name, []]));
  const lines: string[] = [];
  for (let i = 0; i < starts; i++) {
    const running = await startService(env);
    try {
      // The first start seeds the data the requests read, then starts again: seeding is not part of a start.
      if (!fixture) {
        fixture = { ...partial, sectionIds: await seed(running.port, partial) };
        i--;
        continue;
      }
      atStart.push(await askProbe(running.child));
      readyMs.push(running.readyMs);
      const order = surfaces.map((_, k) => surfaces[(k + i) % surfaces.length]);
      for (const surface of order) firstMs.get(surface.name)!.push((await ok(surface.name, surface.request(running.port, fixture))).ms);
      if (i < starts - 1) continue;

      // The last start goes on: every surface warm, then the soak.
      await warmUp(running.port, fixture);
      const warm = await askProbe(running.child);
      const warmMs = new Map<string, number>();
      for (const surface of surfaces) {
        const times: number[] = [];
        for (let k = 0; k < 5; k++) times.push((await ok(surface.name, surface.request(running.port, fixture))).ms);
        warmMs.set(surface.name, median(times));
      }
      log(`  ${target.dialect}: soak, ${soakConnections} connections for ${soakSeconds} s`);
      const soaked = await soak(running, fixture);
      const rss = soaked.samples.map((s) => s.memory.rss);
      const last = soaked.samples.at(-1)!;
      const twentyBefore = soaked.samples.filter((s) => s.second <= soakSeconds - 20).at(-1) ?? soaked.samples[0];
      const growth = (last.memory.rss - twentyBefore.memory.rss) / twentyBefore.memory.rss;
      const startRss = median(atStart.map((r) => r.memory.rss));
      const row = (what: string, m: Pick<NodeJS.MemoryUsage, 'rss' | 'heapUsed' | 'external'>, goal: string) => `| ${what} | ${mb(m.rss)} | ${mb(m.heapUsed)} | ${mb(m.external)} | ${goal} |`;
      const medianOf = (key: 'rss' | 'heapUsed' | 'external') => median(atStart.map((r) => r.memory[key]));
      const peak = soaked.samples.reduce((a, b) => (b.memory.rss > a.memory.rss ? b : a));
      lines.push(
        `### ${target.dialect} (${target.description})`,
        '',
        `\`node ${[...nodeArgs, 'bin/atrium.js', 'serve'].join(' ')}\`, default configuration; ${atStart.length} starts, ready after ${Math.round(median(readyMs))} ms (median).`,
        '',
        '| step | RSS MB | heap used MB | external MB | goal |',
        '| --- | --- | --- | --- | --- |',
        row(`right after start (median of ${atStart.length})`, { rss: startRss, heapUsed: medianOf('heapUsed'), external: medianOf('external') }, `≤ 150: ${startRss <= 150e6 ? 'met' : '**missed**'}`),
        row('after the warm-up (every surface)', warm.memory, `≤ 200: ${warm.memory.rss <= 200e6 ? 'met' : '**missed**'}`),
        row(`soak, highest (at ${peak.second} s)`, peak.memory, `≤ 250: ${Math.max(...rss) <= 250e6 ? 'met' : '**missed**'}`),
        row(`soak, end (${soakSeconds} s)`, last.memory, `last 20 s grew ${(growth * 100).toFixed(1)} % (< 5 %: ${growth < 0.05 ? 'met' : '**missed**'})`),
        '',
        `Soak: ${soaked.requests} requests (${Math.round(soaked.requests / soakSeconds)}/s), ${soaked.non2xx} not 2xx, ${soaked.errors} errors. RSS each 10 s (MB): ${soaked.samples
          .filter((s) => s.second % 10 === 0)
          .map((s) => mb(s.memory.rss))
          .join(', ')}.`,
        '',
        '| first request after start | p50 ms | slowest ms | warm p50 ms |',
        '| --- | --- | --- | --- |',
        ...surfaces.map((s) => `| ${s.name} | ${median(firstMs.get(s.name)!).toFixed(1)} | ${Math.max(...firstMs.get(s.name)!).toFixed(1)} | ${warmMs.get(s.name)!.toFixed(1)} |`),
        '',
        `Packages loaded at start (${atStart[0].packages.length}): ${atStart[0].packages.join(', ')}.`,
        '',
      );
      if (soaked.non2xx > 0 || soaked.errors > 0) process.exitCode = 1;
    } finally {
      await running.stop();
    }
  }
  return lines.join('\n');
}

const openers: Array<() => Promise<DatabaseTarget | { unavailable: string }>> = [];
if (settings.databases.has('sqlite')) openers.push(async () => sqliteTarget());
if (settings.databases.has('postgres')) openers.push(async () => (settings.postgresUrl ? postgresTarget(settings.postgresUrl) : { unavailable: 'BENCH_DATABASE_URL is empty' }));

log(`atrium bench:memory: Node ${process.version}; ${starts} starts per database, soak ${soakConnections} connections x ${soakSeconds} s`);
const report: string[] = [];
for (const open of openers) {
  const target = await open();
  if ('unavailable' in target) {
    report.push(`skipped: ${target.unavailable}`, '');
    continue;
  }
  try {
    log(`${target.dialect}: ${target.description}`);
    report.push(await measure(target));
  } finally {
    await target.dispose();
  }
}
process.stdout.write(report.join('\n') + '\n');
