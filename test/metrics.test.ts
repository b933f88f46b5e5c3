// Prometheus metrics of a real server process (docs/operating.md#metrics): `GET /metrics` on METRICS_PORT only,
// never on an organisation's address; known requests move the request counter and the latency histogram of
// their operation by exactly their number; the worker's webhook attempts and mail count by result; the queue
// gauges read the database; the standard process metrics are there.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, dialectUnderTest, type TestContext } from './support/harness.ts';
import type { Caller } from './support/factories.ts';
import { startServerProcess, type ServerProcess } from './support/server-process.ts';
import { until } from './support/wait.ts';
import { loopbackFetch } from './support/oauth.ts';

/** Every sample of a scrape, keyed by its name and labels as written (`name{a="1",b="2"}`). */
function parseSamples(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

describe('metrics of a real server process', () => {
  let t: TestContext;
  let c: Caller;
  let server: ServerProcess;
  let api: string;
  let metricsUrl: string;

  const scrape = async () => {
    const response = await fetch(`${metricsUrl}/metrics`);
    assert.equal(response.status, 200);
    return { contentType: response.headers.get('content-type'), samples: parseSamples(await response.text()) };
  };
  const sample = async (key: string) => (await scrape()).samples.get(key) ?? 0;
  /** A request to the organisation's address on the API listener. */
  const get = (path: string) => loopbackFetch(`http://${c.org.address}:${new URL(api).port}${path}`, { headers: { authorization: `Bearer ${c.key}` } });

  before(async () => {
    t = await startTestApp();
    c = await t.make.caller();
    server = startServerProcess({ ...t.processEnv, METRICS_PORT: '0', ATRIUM_ROLES: 'api,worker', WEBHOOK_POLL_INTERVAL_MS: '50', MAIL_POLL_INTERVAL_MS: '100' });
    api = await server.url;
    await until(async () => (await fetch(`${api}/readyz`)).status === 200, 'the server to be ready', 30_000);
    metricsUrl = (server.logs.find((l) => l.msg === 'metrics listening')?.address as string | undefined) ?? assert.fail('no "metrics listening" log line');
  });
  after(async () => {
    await server?.stop();
    await t.close();
  });

  test('GET /metrics answers in the Prometheus text format, with the process metrics; nothing else is served there', async () => {
    const { contentType, samples } = await scrape();
    assert.match(contentType ?? '', /^text\/plain; version=0\.0\.4/);
    for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes', 'atrium_database_up']) {
      assert.ok(samples.has(name), `${name} is exported`);
    }
    assert.equal(samples.get('atrium_database_up'), 1);
    assert.equal((await fetch(`${metricsUrl}/`)).status, 404);
    assert.equal((await fetch(`${metricsUrl}/metrics`, { method: 'POST' })).status, 405);
  });

  test('metrics are not on an organisation address: /metrics there is a 404 problem document', async () => {
    const response = await get('/metrics');
    assert.equal(response.status, 404);
    assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  });

  test('known requests move the request counter and the latency histogram of their operation by exactly their number', async () => {
    const section = await t.make.section(c.org);
    const ok = 'atrium_http_requests_total{operation="getSection",method="GET",status="200"}';
    const notFound = 'atrium_http_requests_total{operation="getSection",method="GET",status="404"}';
    const timed = 'atrium_http_request_duration_seconds_count{operation="getSection"}';
    const slowest = 'atrium_http_request_duration_seconds_bucket{le="10",operation="getSection"}';
    const before = await scrape();
    for (let i = 0; i < 3; i++) assert.equal((await get(`/api/v1/sections/${section.id}`)).status, 200);
    assert.equal((await get('/api/v1/sections/0193a5b2-7c1d-7000-8000-00000000dead')).status, 404);
    const { samples } = await scrape();
    const delta = (key: string) => (samples.get(key) ?? 0) - (before.samples.get(key) ?? 0);
    assert.equal(delta(ok), 3);
    assert.equal(delta(notFound), 1);
    assert.equal(delta(timed), 4);
    assert.equal(delta(slowest), 4);
    assert.ok((samples.get('atrium_http_request_duration_seconds_sum{operation="getSection"}') ?? 0) > 0);
    // Routes that are not operations count by their pattern; no route at all is "unmatched".
    assert.ok((samples.get('atrium_http_requests_total{operation="/readyz",method="GET",status="200"}') ?? 0) >= 1);
    const unmatched = 'atrium_http_requests_total{operation="unmatched",method="GET",status="404"}';
    await get('/no/such/route');
    assert.equal((await sample(unmatched)) - (samples.get(unmatched) ?? 0), 1);
  });

  test('webhook delivery attempts count by result, and the delivery backlog is read from the database', async () => {
    const success = 'atrium_webhook_delivery_attempts_total{result="success"}';
    const httpError = 'atrium_webhook_delivery_attempts_total{result="http_error"}';
    const [successes, errors] = [await sample(success), await sample(httpError)];
    t.receiver.respond((r) => (r.path.startsWith('/hooks/metrics-failing') ? { status: 500 } : { status: 200 }));
    await t.make.webhookSubscription(c.org, { url: `${t.receiver.url}/hooks/metrics-ok`, event_types: ['category.created'] });
    await t.make.webhookSubscription(c.org, { url: `${t.receiver.url}/hooks/metrics-failing`, event_types: ['category.created'] });
    await t.make.category(c.org, { name: 'Counted' });
    await until(async () => (await sample(success)) >= successes + 1 && (await sample(httpError)) >= errors + 1, 'one success and one failure to be counted', 20_000);
    // The failed delivery waits for its retry: the backlog shows it until then.
    assert.ok((await sample('atrium_webhook_deliveries_pending')) >= 1);
    const { samples } = await scrape();
    for (const name of ['atrium_outbox_events_pending', 'atrium_outbox_oldest_pending_age_seconds', 'atrium_webhook_queue_lag_seconds']) assert.ok(samples.has(name), `${name} is exported`);
  });

  test('mail handed over counts as sent; the mail queue gauges are exported', async () => {
    const sent = 'atrium_mail_sent_total{result="sent"}';
    const already = await sample(sent);
    await t.make.emailMessage(c.org, { status: 'scheduled', send_at: new Date(Date.now() - 1000).toISOString() });
    // Two recipients, each one mail.
    await until(async () => (await sample(sent)) >= already + 2, 'the two mails to be counted', 20_000);
    const { samples } = await scrape();
    for (const key of ['atrium_mail_queue_messages{state="due"}', 'atrium_mail_queue_messages{state="sending"}', 'atrium_mail_queue_lag_seconds']) assert.ok(samples.has(key), `${key} is exported`);
  });

  test('the PostgreSQL pool is described (SQLite has no pool)', async () => {
    const { samples } = await scrape();
    if (dialectUnderTest === 'postgres') {
      assert.ok((samples.get('atrium_db_pool_max_connections') ?? 0) > 0);
      assert.ok(samples.has('atrium_db_pool_connections{state="idle"}'));
      assert.ok(samples.has('atrium_db_pool_waiting_requests'));
    } else {
      assert.equal(samples.has('atrium_db_pool_max_connections'), false);
    }
  });
});
