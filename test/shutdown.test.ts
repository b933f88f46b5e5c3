// Clean shutdown of a real server process (docs/operating.md#starting-losing-the-database-stopping): on SIGTERM the listener closes first, so
// a new connection is refused, never answered 503; requests in flight finish (with `Connection: close`);
// idle keep-alive connections are closed; the worker hands back the deliveries it claimed; exit 0.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startTestApp, type TestContext } from './support/harness.ts';
import type { Caller } from './support/factories.ts';
import { startServerProcess, type ServerProcess } from './support/server-process.ts';
import { until } from './support/wait.ts';

type Outcome =
  | { kind: 'response'; status: number; complete: boolean; connection: string | undefined; keepAlive: boolean }
  | { kind: 'error'; code: string; keepAlive: boolean };

/** One request; the outcome says whether its whole body arrived (the length it announced, and valid JSON). */
function send(base: string, agent: http.Agent | false, options: { method?: string; path: string; headers: Record<string, string>; body?: string }): Promise<Outcome> {
  const keepAlive = agent !== false;
  return new Promise((resolve) => {
    const req = http.request(`${base}${options.path}`, { method: options.method ?? 'GET', agent, headers: options.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (err: NodeJS.ErrnoException) => resolve({ kind: 'error', code: err.code ?? err.message, keepAlive }));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        let json = true;
        try {
          JSON.parse(body.toString('utf8'));
        } catch {
          json = false;
        }
        const complete = json && body.length === Number(res.headers['content-length']);
        resolve({ kind: 'response', status: res.statusCode!, complete, connection: res.headers.connection, keepAlive });
      });
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ kind: 'error', code: err.code ?? err.message, keepAlive }));
    req.end(options.body);
  });
}

describe('shutdown of a real server process', () => {
  let t: TestContext;
  let c: Caller;
  before(async () => {
    t = await startTestApp();
    c = await t.make.caller();
  });
  after(() => t.close());

  const startServer = async (env: Record<string, string> = {}): Promise<{ server: ServerProcess; base: string }> => {
    const server = startServerProcess({ ...t.processEnv, WEBHOOK_POLL_INTERVAL_MS: '50', MAIL_POLL_INTERVAL_MS: '600000', ...env });
    try {
      const base = await server.url;
      // A connection reset while the process starts up is "not ready yet", not a failure.
      await until(async () => (await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200, 'the server to be ready', 30_000);
      return { server, base };
    } catch (err) {
      // A server that never became ready must not outlive its test (it would hold the next test's resources).
      await server.stop();
      throw err;
    }
  };

  test('SIGTERM during a burst: every request completes or is refused, none is answered 503 or reset; exit 0 within 10 s', { timeout: 60_000 }, async () => {
    const section = await t.make.section(c.org);
    const { server, base } = await startServer({ ATRIUM_ROLES: 'api,worker' });
    const headers = { host: c.org.address, authorization: `Bearer ${c.key}` };
    const outcomes: Outcome[] = [];
    let stop = false;
    // Keep-alive clients (one connection each, reused) and clients opening a new connection per request.
    const loop = async (agent: http.Agent | false) => {
      while (!stop) {
        const outcome = await send(base, agent, { path: `/api/v1/sections/${section.id}`, headers });
        outcomes.push(outcome);
        if (outcome.kind === 'error') return;
      }
    };
    const agents = Array.from({ length: 6 }, () => new http.Agent({ keepAlive: true, maxSockets: 1 }));
    const loops = [...agents.map(loop), ...Array.from({ length: 4 }, () => loop(false))];
    let signalledAt = 0;
    try {
      await until(() => outcomes.length >= 200, 'the burst to be under way', 30_000);
      // A long request in flight when the signal arrives (a webhook subscription waits for its verification
      // ping, which the receiver answers after 1.5 s): it must complete, and its connection then close.
      t.receiver.respond((r) => (r.path.startsWith('/hooks/slow') ? { status: 200, delayMs: 1_500 } : { status: 200 }));
      const long = send(base, agents[0], {
        method: 'POST',
        path: '/api/v1/webhook_subscriptions',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ url: `${t.receiver.url}/hooks/slow`, event_types: ['*'] }),
      });
      await t.receiver.waitFor(1, '/hooks/slow');
      signalledAt = performance.now();
      const exitCode = await server.stop('SIGTERM', 20_000);
      const took = performance.now() - signalledAt;
      assert.equal(exitCode, 0);
      assert.ok(took < 10_000, `exit took ${took} ms`);
      assert.deepEqual(await long, { kind: 'response', status: 201, complete: true, connection: 'close', keepAlive: true });
    } finally {
      stop = true;
      await Promise.all(loops);
      for (const agent of agents) agent.destroy();
      await server.stop('SIGKILL');
    }
    const refused = outcomes.filter((o) => o.kind === 'error' && o.code === 'ECONNREFUSED');
    const others = outcomes.filter((o) => !(o.kind === 'response' && o.status === 200 && o.complete) && !(o.kind === 'error' && o.code === 'ECONNREFUSED'));
    assert.deepEqual(others, [], 'every request completed with its whole body, or its connection was refused');
    assert.ok(refused.length >= 1, 'new connections were refused after the signal');
    // Keep-alive clients were told to close (or found their connection closed while idle) and then refused.
    assert.ok(outcomes.some((o) => o.kind === 'response' && o.keepAlive && o.connection === 'close'), 'a keep-alive response carried Connection: close');
  });

  test('a stopping worker hands back the delivery it was sending, so it is due again at once', { timeout: 60_000 }, async () => {
    const prefix = '/hooks/shutdown';
    const subscription = await t.make.webhookSubscription(c.org, { url: `${t.receiver.url}${prefix}`, event_types: ['category.created'] });
    // The receiver answers slowly: the worker is in the middle of the attempt when it is told to stop.
    t.receiver.respond((r) => (r.path.startsWith(prefix) ? { status: 200, delayMs: 6_000 } : { status: 200 }));
    await t.make.category(c.org, { name: 'Handed back' });
    const server = startServerProcess({ ...t.processEnv, ATRIUM_ROLES: 'worker', WEBHOOK_POLL_INTERVAL_MS: '50', MAIL_POLL_INTERVAL_MS: '600000', WEBHOOK_LEASE_MS: '600000' });
    try {
      await t.receiver.waitFor(1, prefix, 30_000);
      const started = performance.now();
      assert.equal(await server.stop('SIGTERM'), 0);
      assert.ok(performance.now() - started < 10_000);
    } finally {
      await server.stop('SIGKILL');
    }
    const rows = await t.database.db.selectFrom('webhook_deliveries').select(['status', 'leased_until', 'attempts']).where('subscription_id', '=', subscription.id).execute();
    assert.deepEqual(rows.map((r) => ({ ...r })), [{ status: 'pending', leased_until: null, attempts: 0 }]);
  });
});
