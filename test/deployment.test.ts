// The deployment we ship (deploy/: nginx.conf, atrium.env, the systemd units' commands; docs/operating.md#deployment), run
// for real: nginx in front of two API processes (ATRIUM_ROLES=api) and two worker processes (ATRIUM_ROLES=worker)
// on one PostgreSQL database and one Redis (docs/operating.md#deployment — several processes share everything a
// client can see). Clients talk to nginx
// over TLS with the organisation's host name; where a test must be sure that two requests reach two different
// processes, it sends them to each process's own port, as nginx does. Runs in the PostgreSQL pass of the suite,
// where nginx and Redis are there too; otherwise it says why it skips.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomInt } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { parseEnv } from 'node:util';
import { Redis } from 'ioredis';
import * as oauth from 'oauth4webapi';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { oauthCredentialId } from '../src/auth/oauth/access-tokens.ts';
import { errorCatalog, type ErrorCode } from '../src/errors/error-catalog.ts';
import { errorExplanations } from '../src/errors/error-explanations.ts';
import type { Organisation } from '../src/domain/organisations/organisations.repository.ts';
import { startTestApp, testDatabaseUrl, type TestContext } from './support/harness.ts';
import { NGINX, deployConfig, freePort, startNginx, type Nginx } from './support/nginx.ts';
import { csrfTokenIn, encodeForm, type Form } from './support/page-client.ts';
import { pkce } from './support/oauth.ts';
import { redisAnswers, testRedisUrl } from './support/redis.ts';
import { startServerProcess, type ServerProcess } from './support/server-process.ts';
import { makeCertificate } from '../testkit/webhook-receiver.ts';
import { until } from './support/wait.ts';

const PASSWORD = 'correct horse battery';
const RATE_LIMIT = 40;
const CALLBACK = 'http://127.0.0.1:9/callback';
const deployDir = path.join(import.meta.dirname, '..', 'deploy');
/** The `atrium` command, as the systemd units in deploy/ run it. */
const atrium = path.join(import.meta.dirname, '..', 'bin', 'atrium.js');

const skip = !testDatabaseUrl
  ? 'needs PostgreSQL (TEST_DATABASE_URL): several processes on one SQLite file is not a deployment we offer'
  : !fs.existsSync(NGINX)
    ? `needs nginx at ${NGINX} (apt-get install nginx; .ci/run installs it)`
    : !(await redisAnswers())
      ? `no Redis answers at ${testRedisUrl}`
      : false;

/** Where a request goes: nginx (TLS), or API process 0 or 1 directly. */
type Via = 'nginx' | 0 | 1;

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: any;
}

interface RequestSpec {
  method?: string;
  host: string;
  path: string;
  headers?: Record<string, string>;
  /** JSON (an object) or a body as it is (a string). */
  body?: unknown;
  form?: Form;
  /** The client's own address (any 127.x.y.z): how the test is several clients. */
  localAddress?: string;
}

/**
 * The local ports of the TCP connections process `pid` has open (Linux: its descriptors that are sockets, looked
 * up in /proc/net/tcp): which worker process sent a webhook, by the port the receiver saw it come from.
 */
function tcpPortsOf(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    let link = '';
    try {
      link = fs.readlinkSync(`/proc/${pid}/fd/${fd}`, { encoding: 'utf8' });
    } catch {
      // Closed since the directory was read.
    }
    const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
    if (inode) inodes.add(inode);
  }
  const ports: number[] = [];
  for (const table of ['tcp', 'tcp6']) {
    for (const line of fs.readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
      const columns = line.trim().split(/\s+/);
      if (columns.length > 9 && inodes.has(columns[9])) ports.push(parseInt(columns[1].split(':')[1], 16));
    }
  }
  return ports;
}

describe('deployment: nginx, two API processes, two workers, one PostgreSQL, one Redis', { skip }, () => {
  let t: TestContext;
  let nginx: Nginx;
  let ports: { https: number; http: number; api: number[] };
  const api: ServerProcess[] = [];
  const workers: ServerProcess[] = [];
  let env: Record<string, string>;
  let dataDir: string | undefined;
  const certificate = skip ? undefined : makeCertificate('DNS:*.deploy.test');
  const nginxAgent = new https.Agent({ keepAlive: true, maxSockets: 16 });
  const directAgent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  /** What the test put in Redis, removed at the end (the machine's Redis is shared with other runs). */
  const mine = { credentials: new Set<string>(), organisations: new Set<string>(), addresses: new Set<string>() };

  const startApi = async (i: number) => {
    // As deploy/atrium-api@.service runs them.
    api[i] = startServerProcess({ ...env, ATRIUM_ROLES: 'api', PORT: String(ports.api[i]) }, [atrium, 'serve']);
    await api[i].url;
    await until(async () => (await send(i as 0 | 1, { host: 'localhost', path: '/readyz' }).catch(() => ({ status: 0 }))).status === 200, `API process ${i} to be ready`, 30_000);
  };

  before(async () => {
    t = await startTestApp();
    ports = { https: await freePort(), http: await freePort(), api: [await freePort(), await freePort()] };
    // The configuration deploy/atrium.env gives every process, but for what is this machine's own.
    const deployEnv = parseEnv(fs.readFileSync(path.join(deployDir, 'atrium.env'), 'utf8')) as Record<string, string>;
    for (const name of ['HOST', 'PUBLIC_SCHEME', 'TRUST_PROXY', 'DEV_BOOTSTRAP']) assert.ok(deployEnv[name], `deploy/atrium.env sets ${name}`);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'atrium-deploy-'));
    env = {
      ...deployEnv,
      ...t.processEnv,
      DATA_DIR: dataDir,
      REDIS_URL: testRedisUrl,
      // nginx listens on a port of the test's, not 443.
      PUBLIC_PORT: String(ports.https),
      RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
      WEBHOOK_POLL_INTERVAL_MS: '50',
      MAIL_POLL_INTERVAL_MS: '600000',
    };
    await Promise.all([startApi(0), startApi(1)]);
    // As deploy/atrium-worker@.service runs them, and as `atrium worker`, which is the same.
    workers.push(startServerProcess({ ...env, ATRIUM_ROLES: 'worker' }, [atrium, 'serve']), startServerProcess(env, [atrium, 'worker']));
    await until(() => workers.every((w) => w.logs.some((l) => l.msg === 'atrium worker running')), 'the workers to run', 30_000);
    nginx = await startNginx({ upstreams: ports.api, httpPort: ports.http, httpsPort: ports.https, certificate: certificate! });
  });

  after(async () => {
    await nginx?.stop();
    await Promise.all([...api, ...workers].map((p) => p.stop()));
    nginxAgent.destroy();
    directAgent.destroy();
    const redis = new Redis(testRedisUrl, { maxRetriesPerRequest: 1 });
    try {
      const keys = [...mine.credentials].map((id) => `atrium-rate:${id}`);
      keys.push(...[...mine.addresses].map((a) => `atrium-login:client:${a}`));
      for (const org of mine.organisations) keys.push(...(await redis.keys(`atrium-login:email:${org}:*`)));
      if (keys.length > 0) await redis.del(...keys);
    } finally {
      redis.disconnect();
    }
    await t?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  function send(via: Via, r: RequestSpec): Promise<Answer> {
    const headers: Record<string, string> = { ...r.headers };
    let payload: string | undefined;
    if (r.form) {
      payload = encodeForm(r.form);
      headers['content-type'] = 'application/x-www-form-urlencoded';
    } else if (r.body !== undefined) {
      payload = typeof r.body === 'string' ? r.body : JSON.stringify(r.body);
      headers['content-type'] ??= 'application/json';
    }
    const common = { host: '127.0.0.1', method: r.method ?? 'GET', path: r.path, localAddress: r.localAddress };
    return new Promise((resolve, reject) => {
      const onResponse = (res: http.IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode!, headers: res.headers, text, json });
        });
      };
      const req =
        via === 'nginx'
          ? https.request({ ...common, port: ports.https, servername: r.host, ca: certificate!.cert, agent: nginxAgent, headers: { host: `${r.host}:${ports.https}`, ...headers } }, onResponse)
          : http.request({ ...common, port: ports.api[via], agent: directAgent, headers: { host: r.host, ...headers } }, onResponse);
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** fetch for the protocol clients (oauth4webapi, the MCP SDK): each request to the organisation goes `via`. */
  const fetchVia =
    (via: Via | (() => Via)) =>
    async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
      const url = new URL(input instanceof Request ? input.url : input);
      const headers = Object.fromEntries(new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined)));
      const body = init.body === undefined || init.body === null ? undefined : String(init.body);
      const res = await send(typeof via === 'function' ? via() : via, { method: init.method ?? 'GET', host: url.hostname, path: `${url.pathname}${url.search}`, headers, body });
      const responseHeaders = new Headers();
      for (const [k, v] of Object.entries(res.headers)) for (const one of v === undefined ? [] : Array.isArray(v) ? v : [v]) responseHeaders.append(k, one);
      return new Response(res.status === 204 || res.status === 304 ? null : res.text, { status: res.status, headers: responseHeaders });
    };

  /** A browser at one organisation address: keeps its cookies and the CSRF token of the last page. */
  function browserAt(host: string, localAddress?: string) {
    const cookies = new Map<string, string>();
    let csrf: string | undefined;
    async function request(via: Via, method: 'GET' | 'POST', path: string, form?: Form, headers: Record<string, string> = {}) {
      const cookie = [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
      const res = await send(via, { method, host, path, localAddress, headers: { ...headers, ...(cookie ? { cookie } : {}) }, ...(form ? { form: csrf ? { ...form, _csrf: csrf } : form } : {}) });
      const setCookies = [res.headers['set-cookie'] ?? []].flat();
      for (const line of setCookies) {
        const [pair] = line.split(';');
        const eq = pair.indexOf('=');
        if (eq === pair.length - 1 || /expires=Thu, 01 Jan 1970/i.test(line)) cookies.delete(pair.slice(0, eq));
        else cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
      }
      csrf = csrfTokenIn(res.text) ?? csrf;
      return { ...res, setCookies, location: res.headers.location };
    }
    return {
      get: (via: Via, path: string) => request(via, 'GET', path),
      post: (via: Via, path: string, form: Form = {}, headers?: Record<string, string>) => request(via, 'POST', path, form, headers),
      async signIn(via: Via, email: string, password: string) {
        await request(via, 'GET', '/login');
        return request(via, 'POST', '/login', { email, password });
      },
      /** GETs `url`, then follows redirects on this address; each request goes to the next of `next()`. */
      async go(next: () => Via, url: string) {
        let res = await request(next(), 'GET', url);
        while (res.location && new URL(res.location, `https://${host}`).hostname === host) {
          const target = new URL(res.location, `https://${host}`);
          res = await request(next(), 'GET', `${target.pathname}${target.search}`);
        }
        return res;
      },
    };
  }

  /** Alternates between the two API processes, starting with `first`. */
  const alternate = (first: 0 | 1 = 0) => {
    let turn = first;
    return () => (turn++ % 2) as 0 | 1;
  };

  const origin = (org: Organisation) => `https://${org.address}:${ports.https}`;
  const randomAddress = () => {
    const address = `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
    mine.addresses.add(address);
    return address;
  };

  async function organisation() {
    const org = await t.make.org({ address: `school-${randomBytes(4).toString('hex')}.deploy.test` });
    mine.organisations.add(org.id);
    const admin = await t.make.person(org, { roles: ['admin'], password: PASSWORD });
    const key = await t.make.apiKey(org, admin.id);
    mine.credentials.add(key.id);
    return { org, admin, key: key.key, keyId: key.id };
  }

  const me = (via: Via, org: Organisation, credential: string) => send(via, { host: org.address, path: '/api/v1/me', headers: { authorization: `Bearer ${credential}` } });

  /** Which API process (0 or 1) logged this request id. */
  const answeredBy = (requestId: string) => api.findIndex((p) => p.logs.some((l) => l.reqId === requestId));

  test('nginx passes every organisation address on over TLS, and logs which process answered; plain HTTP redirects', async () => {
    const { org, key } = await organisation();
    const res = await me('nginx', org, key);
    assert.equal(res.status, 200);
    assert.equal(res.json.organisation.address, org.address);
    assert.match(String(res.headers['request-id']), /^req_[0-9a-f]{32}$/);
    const unknown = await send('nginx', { host: 'nobody.deploy.test', path: '/api/v1/me' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.json.code, 'tenancy.unknown_organisation');
    // The OAuth issuer names the public origin: https, nginx's port.
    const metadata = await send('nginx', { host: org.address, path: '/.well-known/oauth-authorization-server' });
    assert.equal(metadata.json.issuer, origin(org));
    await until(() => nginx.accessLog().some((l) => l.includes(String(res.headers['request-id']))), 'the access log line');
    const line = nginx.accessLog().find((l) => l.includes(String(res.headers['request-id'])))!;
    assert.match(line, new RegExp(`upstream=127\\.0\\.0\\.1:(${ports.api.join('|')}) upstream_status=200 `));
    const plain = await new Promise<http.IncomingMessage>((resolve, reject) =>
      http.get({ host: '127.0.0.1', port: ports.http, path: '/api/v1/me?x=1', headers: { host: org.address } }, resolve).on('error', reject),
    );
    plain.resume();
    assert.equal(plain.statusCode, 308);
    assert.equal(plain.headers.location, `https://${org.address}/api/v1/me?x=1`);
  });

  test('what nginx refuses itself is a problem document of the catalog; its limits are above the API’s; /metrics is not served', async () => {
    // Every problem document in the configuration is one of the catalog's codes, with its status, title and category.
    const documents = [...fs.readFileSync(deployConfig, 'utf8').matchAll(/return (\d{3}) '(\{.*\})\\n';/g)];
    assert.equal(documents.length, 5);
    for (const [, status, text] of documents) {
      const doc = JSON.parse(text.replaceAll('$atrium_docs_host', 'h').replaceAll('$request_id', 'x'));
      const entry = errorCatalog[doc.code as ErrorCode];
      assert.deepEqual([doc.status, doc.title, doc.category, Number(status)], [entry.status, entry.title, entry.category, entry.status], doc.code);
    }
    const { org, key } = await organisation();
    const auth = { authorization: `Bearer ${key}` };
    const big = (bytes: number) => JSON.stringify({ fullname: 'x'.repeat(bytes), shortname: 'BIG' });
    for (const [request, code, from] of [
      [{ method: 'POST', path: '/api/v1/courses', body: big(1_500_000) }, 'request.body_too_large', 'the API'],
      [{ method: 'POST', path: '/api/v1/courses', body: big(3_000_000) }, 'request.body_too_large', 'nginx'],
      [{ path: `/api/v1/courses?q=${'x'.repeat(20_000)}` }, 'request.too_large', 'the API'],
      [{ path: `/api/v1/courses?q=${'x'.repeat(40_000)}` }, 'request.too_large', 'nginx'],
      [{ path: '/api/v1/me', headers: { 'x-padding': 'x'.repeat(40_000) } }, 'request.too_large', 'nginx'],
      [{ path: '/metrics' }, 'request.route_not_found', 'nginx'],
      [{ path: '/.atrium-nginx/service.unavailable' }, 'request.route_not_found', 'nginx'],
    ] as const) {
      const logged = nginx.accessLog().length;
      const refused = await send('nginx', { host: org.address, ...request, headers: { ...auth, ...('headers' in request ? request.headers : {}) } });
      assert.equal(refused.status, errorCatalog[code].status, `${code} from ${from}`);
      assert.equal(refused.headers['content-type'], from === 'nginx' ? 'application/problem+json' : 'application/problem+json; charset=utf-8');
      assert.equal(refused.json.code, code);
      assert.match(String(refused.headers['request-id']), /^req_[0-9a-f]{32}$/);
      assert.equal(refused.json.request_id, refused.headers['request-id']);
      // The access log says who answered: a process (with its Request-Id), or nginx itself.
      await until(() => nginx.accessLog().length > logged, 'the access log line');
      const line = nginx.accessLog()[logged];
      if (from === 'the API') assert.ok(line.includes(`upstream_status=${refused.status}`) && line.includes(`request_id=${refused.json.request_id}`), line);
      else assert.match(line, /upstream=- upstream_status=- /);
    }
    // Bytes that are not HTTP.
    const garbage = await new Promise<string>((resolve, reject) => {
      const socket = tls.connect({ host: '127.0.0.1', port: ports.https, servername: org.address, ca: certificate!.cert }, () => socket.end('NOT HTTP AT ALL\r\n\r\n'));
      let text = '';
      socket.on('data', (c: Buffer) => (text += c.toString())).on('end', () => resolve(text)).on('error', reject);
    });
    assert.match(garbage, /^HTTP\/1\.1 422 /);
    assert.equal(JSON.parse(garbage.slice(garbage.indexOf('\r\n\r\n') + 4)).code, 'request.malformed');
    // nginx's problem documents link to pages the service serves.
    const docs = await send('nginx', { host: org.address, path: '/docs/errors/service.unavailable' });
    assert.equal(docs.status, 200);
    assert.ok(docs.text.includes('<h1><code>service.unavailable</code></h1>'));
  });

  test(`the rate limit is shared: ${RATE_LIMIT} requests a minute through nginx in all, whichever process answers`, async () => {
    const { org, key } = await organisation();
    const answers: Answer[] = [];
    const queue = Array.from({ length: RATE_LIMIT + 20 }, (_, i) => i);
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (queue.shift() !== undefined) answers.push(await me('nginx', org, key));
      }),
    );
    const ok = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 429);
    assert.equal(ok.length, RATE_LIMIT);
    assert.equal(refused.length, 20);
    for (const r of refused) {
      assert.equal(r.json.code, 'rate_limit.exceeded');
      assert.ok(Number(r.headers['retry-after']) >= 1);
      assert.equal(r.json.retry_after, Number(r.headers['retry-after']));
    }
    // Each process logs the requests it answered (read from its output as it comes).
    const answeredByBoth = () => {
      const by = ok.map((a) => answeredBy(String(a.headers['request-id'])));
      return by.includes(0) && by.includes(1);
    };
    await until(answeredByBoth, 'both API processes to have answered some');
    for (const via of [0, 1] as const) assert.equal((await me(via, org, key)).status, 429, `process ${via} counts in the same budget`);
  });

  test('the same Idempotency-Key sent at once to both processes (and through nginx) has one effect', async () => {
    const { org, key } = await organisation();
    const shortname = `IDEM-${randomBytes(3).toString('hex')}`;
    const post = (via: Via) =>
      send(via, { method: 'POST', host: org.address, path: '/api/v1/courses', headers: { authorization: `Bearer ${key}`, 'idempotency-key': `k-${shortname}` }, body: { fullname: 'Once only', shortname } });
    const vias: Via[] = [0, 1, 'nginx', 0, 1, 'nginx', 0, 1, 'nginx', 0, 1];
    const first = await Promise.all(vias.map(post));
    const created = first.filter((a) => a.status === 201);
    assert.equal(created.filter((a) => a.headers['idempotency-replayed'] !== 'true').length, 1, 'one request ran');
    for (const a of first) {
      if (a.status === 201) assert.deepEqual(a.json, created[0].json);
      else {
        // docs/conventions.md#idempotency: the same key while the first request is still running: 409 with Retry-After.
        assert.equal(a.status, 409, a.text);
        assert.equal(a.json.code, 'idempotency.in_progress');
        assert.equal(a.headers['retry-after'], '1');
      }
    }
    // Sent again, each of them is answered from the record, on either process.
    for (const [i, a] of first.entries()) {
      if (a.status === 201) continue;
      const again = await post(vias[i]);
      assert.equal(again.status, 201);
      assert.equal(again.headers['idempotency-replayed'], 'true');
      assert.deepEqual(again.json, created[0].json);
    }
    const rows = await t.database.db.selectFrom('courses').select('id').where('organisation_id', '=', org.id).where('shortname', '=', shortname).execute();
    assert.deepEqual(rows.map((r) => r.id), [created[0].json.id]);
  });

  test('a key revoked through one process is refused by the other on its very next request', async () => {
    const { org, admin, key, keyId } = await organisation();
    // Both processes have verified the key, so each holds it in its cache.
    for (const via of [0, 1] as const) assert.equal((await me(via, org, key)).status, 200);
    const browser = browserAt(org.address);
    assert.equal((await browser.signIn(0, admin.email, PASSWORD)).status, 303);
    await browser.get(0, '/admin/integrations/api-keys');
    assert.equal((await browser.post(0, `/admin/integrations/api-keys/${keyId}/revoke`)).status, 303);
    for (const via of [1, 'nginx', 0] as const) {
      const res = await me(via, org, key);
      assert.equal(res.status, 401, `via ${via}`);
      assert.equal(res.json.code, 'auth.revoked_credential');
      assert.match(String(res.headers['www-authenticate']), /^Bearer/);
    }
  });

  test('a file stored through one process is read through the other (they share the storage directory)', async () => {
    const { org, key } = await organisation();
    const content = randomBytes(64 * 1024);
    const auth = { authorization: `Bearer ${key}` };
    const stored = await send(0, { method: 'POST', host: org.address, path: '/api/v1/files', headers: auth, body: { filename: 'timetable.bin', content_type: 'application/octet-stream', content_base64: content.toString('base64') } });
    assert.equal(stored.status, 201, stored.text);
    const read = await new Promise<Buffer>((resolve, reject) =>
      http.get({ host: '127.0.0.1', port: ports.api[1], path: `/api/v1/files/${stored.json.id}/content`, headers: { host: org.address, ...auth } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c)).on('end', () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks)) : reject(new Error(`${res.statusCode}`))));
      }).on('error', reject),
    );
    assert.ok(read.equals(content));
  });

  test('a session made through one process works on the other; signing out through one ends it on both', async () => {
    const { org, admin } = await organisation();
    const browser = browserAt(org.address);
    const signedIn = await browser.signIn('nginx', admin.email, PASSWORD);
    assert.equal(signedIn.status, 303);
    // PUBLIC_SCHEME=https behind nginx: the session cookie is Secure.
    assert.match(signedIn.setCookies.find((c) => c.startsWith('atrium_session='))!, /; Secure/);
    for (const via of [0, 1] as const) assert.equal((await browser.get(via, '/admin')).status, 200, `process ${via}`);
    assert.equal((await browser.post(1, '/logout')).status, 303);
    for (const via of [0, 'nginx'] as const) {
      const res = await browser.get(via, '/admin');
      assert.equal(res.status, 303, `via ${via}`);
      assert.match(res.location!, /^\/login/);
    }
  });

  test('the sign-in lockout counts the real client address behind nginx (TRUST_PROXY), which the client cannot forge', async () => {
    const { org, admin } = await organisation();
    const [attacker, colleague] = [randomAddress(), randomAddress()];
    const browser = browserAt(org.address, attacker);
    await browser.get('nginx', '/login');
    // Eleven wrong pairs, each for another e-mail: only the address's count locks.
    for (let i = 0; i < 11; i++) assert.equal((await browser.post('nginx', '/login', { email: `nobody-${i}@deploy.test`, password: 'wrong' })).status, 401);
    assert.equal((await browser.post('nginx', '/login', { email: admin.email, password: PASSWORD })).status, 429, 'the client is locked, right pair or not');
    const forged = await browser.post('nginx', '/login', { email: admin.email, password: PASSWORD }, { 'x-forwarded-for': colleague });
    assert.equal(forged.status, 429, 'an X-Forwarded-For of its own does not make the client someone else');
    assert.equal((await browserAt(org.address, colleague).signIn('nginx', admin.email, PASSWORD)).status, 303, 'another client signs in');
  });

  test('OAuth: a token from one process works on the other; an authorization code flow runs across both', async () => {
    const { org, admin } = await organisation();
    const machine = await t.app.services.oauthClients.create(org.id, admin.id, { name: 'Nightly sync', type: 'confidential', redirect_uris: [], grant_types: ['client_credentials'], scopes: ['courses:read'], service_person_id: admin.id });
    mine.credentials.add(oauthCredentialId(machine.client_id, admin.id));
    const token = await send(0, {
      method: 'POST',
      host: org.address,
      path: '/oauth/token',
      headers: { authorization: `Basic ${Buffer.from(`${machine.client_id}:${machine.client_secret}`).toString('base64')}` },
      form: { grant_type: 'client_credentials', scope: 'courses:read' },
    });
    assert.equal(token.status, 200, token.text);
    for (const via of [1, 'nginx'] as const) assert.equal((await me(via, org, token.json.access_token)).status, 200);

    const app = await t.app.services.oauthClients.create(org.id, admin.id, { name: 'Timetable app', type: 'public', redirect_uris: [CALLBACK], grant_types: ['authorization_code'], scopes: ['courses:read'] });
    mine.credentials.add(oauthCredentialId(app.client_id, admin.id));
    const client = { client_id: app.client_id };
    const issuer = new URL(origin(org));
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { [oauth.customFetch]: fetchVia('nginx'), algorithm: 'oauth2' }));
    const { verifier, challenge } = await pkce();
    const url = new URL(as.authorization_endpoint!);
    for (const [k, v] of Object.entries({ client_id: app.client_id, redirect_uri: CALLBACK, response_type: 'code', scope: 'courses:read', state: 'st-1', code_challenge: challenge, code_challenge_method: 'S256' })) url.searchParams.set(k, v);
    const browser = browserAt(org.address);
    await browser.signIn('nginx', admin.email, PASSWORD);
    // Every step on the other process than the step before: authorize, the consent page, the decision.
    const next = alternate(0);
    const consent = await browser.go(next, `${url.pathname}${url.search}`);
    assert.equal(consent.status, 200);
    const action = /<form method="post" action="([^"]+)" class="actions">/.exec(consent.text)![1];
    const decided = await browser.post(next(), new URL(action, issuer).pathname, { decision: 'allow' });
    const back = await browser.go(next, decided.location!.replace(issuer.origin, ''));
    const callback = new URL(back.location!);
    assert.equal(callback.origin + callback.pathname, CALLBACK);
    const params = oauth.validateAuthResponse(as, client, callback, 'st-1');
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, CALLBACK, verifier, { [oauth.customFetch]: fetchVia(next) }));
    for (const via of [0, 1] as const) assert.equal((await me(via, org, tokens.access_token)).status, 200);
    // The refresh token, rotated on use, on one process and then the other.
    let refresh = tokens.refresh_token!;
    for (const via of [0, 1] as const) {
      const rotated = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), refresh, { [oauth.customFetch]: fetchVia(via) }));
      assert.notEqual(rotated.refresh_token, refresh);
      refresh = rotated.refresh_token!;
      assert.equal((await me(via === 0 ? 1 : 0, org, rotated.access_token)).status, 200);
    }
  });

  test('MCP: settings saved through one process apply on the other at once; a token from one calls tools on the other', async () => {
    const { org, admin } = await organisation();
    const machine = await t.app.services.oauthClients.create(org.id, admin.id, { name: 'Assistant', type: 'confidential', redirect_uris: [], grant_types: ['client_credentials'], scopes: ['courses:read'], service_person_id: admin.id });
    mine.credentials.add(oauthCredentialId(machine.client_id, admin.id));
    const resource = `${origin(org)}/mcp`;
    const token = await send(0, {
      method: 'POST',
      host: org.address,
      path: '/oauth/token',
      headers: { authorization: `Basic ${Buffer.from(`${machine.client_id}:${machine.client_secret}`).toString('base64')}` },
      form: { grant_type: 'client_credentials', scope: 'courses:read', resource },
    });
    assert.equal(token.status, 200, token.text);
    const connect = async (via: Via) => {
      const client = new Client({ name: 'atrium-deployment-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
      await client.connect(new StreamableHTTPClientTransport(new URL(resource), { fetch: fetchVia(via) as never, requestInit: { headers: { authorization: `Bearer ${token.json.access_token}` } } }));
      return client;
    };
    const onB = await connect(1);
    const toolNames = async () => (await onB.listTools()).tools.map((tool) => tool.name).sort();
    assert.ok((await toolNames()).includes('get_course'));

    const browser = browserAt(org.address);
    await browser.signIn(0, admin.email, PASSWORD);
    await browser.get(0, '/admin/integrations/mcp');
    assert.equal((await browser.post(0, '/admin/integrations/mcp', { enabled: 'on', tools: ['list_courses'] })).status, 303);
    assert.deepEqual(await toolNames(), ['list_courses']);
    const course = await t.make.course(org, { fullname: 'Seen through MCP' });
    const call = await onB.callTool({ name: 'list_courses', arguments: {} });
    assert.notEqual(call.isError, true, JSON.stringify(call.content));
    assert.deepEqual((call.structuredContent as { data: Array<{ id: string }> }).data.map((c) => c.id), [course.id]);
    await onB.close();

    await browser.get(0, '/admin/integrations/mcp');
    await browser.post(0, '/admin/integrations/mcp', { tools: ['list_courses'] });
    for (const via of [1, 'nginx'] as const) {
      const off = await send(via, { method: 'POST', host: org.address, path: '/mcp', headers: { authorization: `Bearer ${token.json.access_token}`, accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' });
      assert.equal(off.status, 404, `via ${via}`);
      assert.equal(off.json.code, 'mcp.disabled');
    }
  });

  test('a burst of 1,000 events is delivered once each, shared by the two workers; only a failed attempt is sent again', { timeout: 120_000 }, async () => {
    const { org, key } = await organisation();
    const prefix = `/hooks/${org.id}`;
    const failedOnce = new Set<string>();
    t.receiver.respond((r) => {
      if (!r.path.startsWith(prefix) || JSON.parse(r.body).type === 'webhook.ping') return { status: 200 };
      // The receiver has a hiccup: the first attempt of each of five events fails.
      const id = r.headers['webhook-id'];
      if (failedOnce.size < 5 && !failedOnce.has(id)) {
        failedOnce.add(id);
        return { status: 503 };
      }
      return { status: 200 };
    });
    const auth = { authorization: `Bearer ${key}` };
    const subscription = await send('nginx', { method: 'POST', host: org.address, path: '/api/v1/webhook_subscriptions', headers: auth, body: { url: `${t.receiver.url}${prefix}`, event_types: ['lesson_page.created'] } });
    assert.equal(subscription.status, 201, subscription.text);
    const lesson = await t.make.lesson(org);
    for (const batch of [1, 2]) {
      const operations = Array.from({ length: 500 }, (_, i) => ({ ref: `p${i}`, op: 'create', data: { lesson_id: lesson.id, title: `Page ${batch}.${i}` } }));
      const res = await send('nginx', { method: 'POST', host: org.address, path: '/api/v1/lesson_pages/bulk', headers: { ...auth, 'idempotency-key': `burst-${batch}` }, body: { operations } });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.summary.succeeded, 500);
    }
    const events = await t.database.db.selectFrom('outbox_events').select('id').where('organisation_id', '=', org.id).where('type', '=', 'lesson_page.created').execute();
    assert.equal(events.length, 1000);

    const sentBy = new Map<number, number>();
    const deliveries = () => t.receiver.received.filter((r) => r.path.startsWith(prefix) && JSON.parse(r.body).type !== 'webhook.ping');
    const settled = async () => {
      workers.forEach((w, i) => tcpPortsOf(w.child.pid!).forEach((port) => sentBy.set(port, i)));
      const rows = await t.database.db.selectFrom('webhook_deliveries').select('status').where('subscription_id', '=', subscription.json.id).where('event_type', '=', 'lesson_page.created').execute();
      return rows.length === 1000 && rows.every((r) => r.status === 'succeeded');
    };
    // The retries wait about 5 s (the first step of the retry schedule).
    await until(settled, 'every delivery to succeed', 100_000);
    const received = deliveries();
    const times = new Map<string, number>();
    for (const r of received) times.set(r.headers['webhook-id'], (times.get(r.headers['webhook-id']) ?? 0) + 1);
    assert.deepEqual([...times.keys()].sort(), events.map((e) => e.id).sort(), 'every event arrived');
    assert.equal(failedOnce.size, 5);
    for (const [id, n] of times) assert.equal(n, failedOnce.has(id) ? 2 : 1, `${id} arrived ${n} times`);
    const perWorker = [0, 1].map((i) => received.filter((r) => sentBy.get(r.remotePort) === i).length);
    assert.ok(perWorker[0] > 0 && perWorker[1] > 0, `both workers delivered (${perWorker.join(' and ')})`);
    const attempts = await t.database.db.selectFrom('webhook_delivery_attempts').innerJoin('webhook_deliveries', 'webhook_deliveries.id', 'webhook_delivery_attempts.delivery_id').select('webhook_delivery_attempts.status_code').where('webhook_deliveries.subscription_id', '=', subscription.json.id).where('webhook_deliveries.event_type', '=', 'lesson_page.created').execute();
    assert.equal(attempts.length, 1005, 'the delivery log records each attempt once');
  });

  test('restarting the API processes one at a time loses no request through nginx; with none running nginx answers a problem document', { timeout: 60_000 }, async () => {
    const { org } = await organisation();
    const outcomes: Array<number | string> = [];
    let running = true;
    // GETs and POSTs, without a credential: each is answered by a process (200, or its own 401), never by nginx.
    const loop = async (method: 'GET' | 'POST') => {
      while (running) {
        const path = method === 'GET' ? '/healthz?restart' : '/api/v1/courses?restart';
        const res = await send('nginx', { method, host: org.address, path, ...(method === 'POST' ? { body: {} } : {}) }).catch((err: Error) => err.message);
        outcomes.push(typeof res === 'string' ? `${method} ${res}` : res.status === 200 || res.status === 401 ? res.status : `${method} ${res.status} ${res.json?.code ?? res.text}`);
        // A client's pace, not a flood: the processes must still start in their usual time.
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };
    const loops = [loop('GET'), loop('GET'), loop('POST'), loop('POST')];
    /** What each stopped process said of its shutdown (src/http/listener.ts), for a failure's message. */
    const shutdowns: string[] = [];
    try {
      for (const i of [0, 1]) {
        await api[i].stop();
        shutdowns.push(...api[i].logs.filter((l) => /listener|idle keep-alive|still running|shutting down/.test(String(l.msg))).map((l) => `API process ${i}: ${JSON.stringify(l)}`));
        await startApi(i);
        // nginx tries a process that refused it again after fail_timeout: wait for it to send this one traffic
        // (the loops' POSTs, which only they send; an access line names the route, never the URL).
        await until(() => api[i].logs.some((l) => l.msg === 'request' && l.method === 'POST' && l.route === '/api/v1/courses'), `nginx to use API process ${i} again`, 15_000);
      }
    } finally {
      running = false;
      await Promise.all(loops);
    }
    const unexpected = outcomes.filter((o) => o !== 200 && o !== 401);
    // nginx's error log says why it answered a request itself (reset, closed early, timed out, and by which
    // process); a refused connection is not among them, since nginx then tries the other process.
    const logged = nginx.errorLog().split('\n').filter((l) => l !== '' && !l.includes('(111: Connection refused)'));
    const why = unexpected.length === 0 ? '' : `\nnginx's error log but refused connections, last lines:\n${logged.slice(-15).join('\n')}\nthe processes' shutdowns:\n${shutdowns.join('\n')}`;
    assert.deepEqual(unexpected, [], `${unexpected.length} of ${outcomes.length} requests failed: ${[...new Set(unexpected)].slice(0, 5).join('\n')}${why}`);
    assert.ok(outcomes.length > 100);

    await Promise.all(api.map((p) => p.stop()));
    const res = await send('nginx', { host: org.address, path: '/api/v1/me' });
    assert.equal(res.status, 502);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.equal(res.headers['retry-after'], '5');
    assert.match(String(res.headers['request-id']), /^req_[0-9a-f]{32}$/);
    assert.deepEqual(res.json, {
      type: `https://${org.address}/docs/errors/service.unavailable`,
      title: errorCatalog['service.unavailable'].title,
      status: 502,
      code: 'service.unavailable',
      category: 'upstream',
      detail: errorExplanations['service.unavailable'].exampleDetail,
      request_id: res.headers['request-id'],
      docs_url: `https://${org.address}/docs/errors/service.unavailable`,
      retry_after: 5,
    });
  });
});
