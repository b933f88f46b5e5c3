// The integration examples are files (examples/*.ts) that these tests run for real; the README (the typed
// client) and docs/webhooks.md (the webhook receiver) show each verbatim after a `<!-- example: path -->`
// marker, and a test fails when the two differ. So the code
// an integrator copies is the code that ran: the typed client against a real listening server (list sections,
// rename one, handle a 422 through the typed problem document), and webhook verification with the
// `standardwebhooks` library against real signed deliveries from an `atrium worker` process.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { webhookReceiver, type AtriumEvent } from '../examples/webhook-receiver.ts';
import { generateSchemaSource, schemaFile } from '../clients/typescript/generate.ts';
import { startTestApp, type TestContext } from './support/harness.ts';
import { testCertificate } from '../testkit/webhook-receiver.ts';
import { until } from './support/wait.ts';

const root = path.join(import.meta.dirname, '..');

/** Each example file and the document that shows it. */
const shownIn = { 'examples/client-quickstart.ts': 'README.md', 'examples/webhook-receiver.ts': 'docs/webhooks.md' };

/** The fenced block that follows `<!-- example: file -->` in the document that shows it. */
function exampleBlock(file: keyof typeof shownIn): string {
  const document = fs.readFileSync(path.join(root, shownIn[file]), 'utf8');
  const start = document.indexOf(`<!-- example: ${file} -->`);
  assert.ok(start >= 0, `${shownIn[file]} has no example marker for ${file}`);
  const match = /```ts\n([\s\S]*?)```/.exec(document.slice(start));
  assert.ok(match, `no ts block after the marker for ${file} in ${shownIn[file]}`);
  return match[1];
}

describe('README examples and the typed client', () => {
  let t: TestContext;
  let baseUrl: string;
  before(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/api/v1`;
  });
  after(() => t.close());

  test('the README and docs/webhooks.md show each example file exactly as it is', () => {
    for (const file of Object.keys(shownIn) as (keyof typeof shownIn)[]) {
      assert.equal(exampleBlock(file), fs.readFileSync(path.join(root, file), 'utf8'), `${file} differs from its block in ${shownIn[file]}`);
    }
  });

  test('the committed client types are what the current OpenAPI document generates (npm run generate:client)', async () => {
    assert.ok((await generateSchemaSource()) === fs.readFileSync(schemaFile, 'utf8'), 'clients/typescript/schema.ts is stale: run `npm run generate:client`');
  });

  test('the client example lists sections, renames one and handles a 422, against a real server', async () => {
    // The organisation at 127.0.0.1, so that the URL an integrator would use reaches it.
    const org = await t.make.org({ address: '127.0.0.1' });
    const c = await t.make.caller({ org });
    const course = await t.make.course(org);
    const week = await t.make.section(org, { course_id: course.id, title: 'Week 1' });
    await t.make.section(org, { course_id: course.id, title: 'Week 2' });

    const { stdout } = await promisify(execFile)(process.execPath, [path.join(root, 'examples', 'client-quickstart.ts')], {
      env: { PATH: process.env.PATH ?? '', ATRIUM_BASE_URL: baseUrl, ATRIUM_API_KEY: c.key, ATRIUM_COURSE_ID: course.id },
    });
    const lines = stdout.trim().split('\n');
    assert.equal(lines[0], `${week.id} Week 1`);
    assert.match(lines[1], / Week 2$/);
    assert.equal(lines[2], 'renamed to Week 1: Foundations');
    assert.equal(lines[3], 'refused /title: `title` must not be empty.');
    const now = await t.api.request({ host: org.address, path: `/api/v1/sections/${week.id}`, key: c.key });
    assert.equal(now.body.title, 'Week 1: Foundations');
  });

  test('the webhook example answers the verification ping, then verifies and acts on real deliveries from a worker', async () => {
    const c = await t.make.caller();
    const events: { event: AtriumEvent; deliveryId: string }[] = [];
    const delivered: Record<string, string>[] = [];
    // The sequence docs/webhooks.md describes: the receiver runs before the secret exists, then again with it.
    let receive = webhookReceiver(undefined, () => assert.fail('nothing unverified is acted on'));
    const server = https.createServer(testCertificate(), (req, res) => {
      delivered.push(req.headers as Record<string, string>);
      receive(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/atrium`;
    let worker: ChildProcess | undefined;
    try {
      const created = await t.api.request({ method: 'POST', host: c.org.address, key: c.key, path: '/api/v1/webhook_subscriptions', body: { url, event_types: ['section.*'] } });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      receive = webhookReceiver(created.body.secret, (event, deliveryId) => events.push({ event, deliveryId }));

      worker = spawn(process.execPath, [path.join(root, 'src', 'cli', 'main.ts'), 'worker'], {
        env: { PATH: process.env.PATH ?? '', ...t.processEnv, WEBHOOK_POLL_INTERVAL_MS: '50', MAIL_POLL_INTERVAL_MS: '600000' },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      const section = await t.make.section(c.org, { title: 'Week 3' });
      const renamed = await t.api.request({ method: 'PATCH', host: c.org.address, key: c.key, path: `/api/v1/sections/${section.id}`, body: { title: 'Week 3: Plants' } });
      assert.equal(renamed.status, 200);
      await until(() => events.some((e) => e.event.type === 'section.updated'), 'the signed section.updated delivery', 20_000);
      const update = events.find((e) => e.event.type === 'section.updated')!;
      assert.equal(update.event.data.id, section.id);
      assert.equal(update.deliveryId, delivered.find((h) => h['webhook-id'] === update.deliveryId)?.['webhook-id']);

      // The same signature on other bytes is refused, and nothing is acted on.
      const headers = delivered.find((h) => h['webhook-id'] === update.deliveryId)!;
      const before = events.length;
      const forged = await fetchInsecure(url, { 'webhook-id': headers['webhook-id'] + 'x', 'webhook-timestamp': headers['webhook-timestamp'], 'webhook-signature': headers['webhook-signature'] }, JSON.stringify({ type: 'section.deleted', timestamp: new Date().toISOString(), data: { id: section.id } }));
      assert.equal(forged, 400);
      assert.equal(events.length, before);
    } finally {
      if (worker && worker.exitCode === null) await new Promise<void>((resolve) => worker!.once('exit', () => resolve()).kill('SIGTERM'));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

/** POSTs to the test's own HTTPS receiver (its self-signed certificate) and answers the status. */
function fetchInsecure(url: string, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method: 'POST', ca: testCertificate().cert, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}
