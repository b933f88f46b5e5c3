// `npm run screenshots`: pictures of the pages a person meets, for docs/authentication.md (docs/screenshots/). Everything is
// real: the CLI makes an organisation at demo.localhost with an administrator and the demo content, the server
// runs as `npm start` runs it (on a fresh SQLite database in a temporary directory), a real HTTPS endpoint
// receives the webhooks, and Chromium signs in and clicks through the pages.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { launchBrowser } from '../testkit/browser.ts';
import { startReceiver, testCertificate } from '../testkit/webhook-receiver.ts';

const root = path.join(import.meta.dirname, '..');
const out = path.join(root, 'docs', 'screenshots');
const ADDRESS = 'demo.localhost';
const EMAIL = 'ada@demo.localhost';
const PASSWORD = 'screenshots only';

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'atrium-screenshots-'));
const receiver = await startReceiver();
const port = await freePort();
const env = {
  ...process.env,
  DATA_DIR: dataDir,
  PORT: String(port),
  DEV_BOOTSTRAP: 'false',
  LOG_LEVEL: 'warn',
  WEBHOOK_ALLOW_HOSTS: '127.0.0.1/32',
  WEBHOOK_CA_FILE: testCertificate().certFile,
  DATABASE_URL: '',
};
const atrium = (...args: string[]) => execFileSync(process.execPath, [path.join(root, 'src/cli/main.ts'), ...args], { env, input: args.includes('set-password') ? PASSWORD : '' });

atrium('org', 'create', '--address', ADDRESS, '--name', 'Riverside Academy');
atrium('person', 'create', '--org', ADDRESS, '--email', EMAIL, '--name', 'Ada Lovelace', '--roles', 'admin');
atrium('person', 'set-password', '--org', ADDRESS, '--email', EMAIL);
atrium('seed', 'demo', '--org', ADDRESS);
atrium('api-key', 'create', '--org', ADDRESS, '--person', EMAIL, '--scopes', 'courses:read,courses:write', '--name', 'Timetable sync');

const server = spawn(process.execPath, [path.join(root, 'src/main.ts')], { env, stdio: ['ignore', 'ignore', 'inherit'] });
const origin = `http://${ADDRESS}:${port}`;
try {
  for (let i = 0; ; i++) {
    if ((await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.ok) break;
    if (i > 100) throw new Error('the server did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  fs.mkdirSync(out, { recursive: true });
  const browser = await launchBrowser();
  const shoot = async (page: import('playwright-core').Page, name: string) => {
    await page.screenshot({ path: path.join(out, `${name}.png`), fullPage: true });
    process.stdout.write(`docs/screenshots/${name}.png\n`);
  };
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`${origin}/login`);
    await shoot(page, 'sign-in');
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Administration' }).waitFor();
    await shoot(page, 'admin');

    await page.goto(`${origin}/admin/integrations/api-keys`);
    await page.getByLabel('Name').fill('Gradebook export');
    for (const scope of ['courses:read', 'enrolments:read']) await page.getByLabel(scope, { exact: true }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByTestId('new-secret').waitFor();
    await shoot(page, 'api-keys');

    await page.goto(`${origin}/admin/webhooks`);
    await page.getByLabel('URL').fill(`${receiver.url}/riverside/timetable`);
    await page.getByLabel('Event types').fill('section.*\ncourse.created');
    await page.getByLabel('Description').fill('Timetable service');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByTestId('new-secret').waitFor();
    await page.getByRole('button', { name: 'Send test event' }).click();
    // The server's worker delivers the test event; show the log once it has.
    await receiver.waitFor(2, '/riverside/timetable');
    await page.waitForTimeout(300);
    await page.reload();
    await shoot(page, 'webhook');
    await page.goto(`${origin}/admin/webhooks`);
    await shoot(page, 'webhooks');

    await page.goto(`${origin}/admin/extensions`);
    await shoot(page, 'extensions');

    await page.goto(`${origin}/admin/people`);
    await page.getByLabel('Email').fill('grace@demo.localhost');
    await page.getByLabel('Name').fill('Grace Hopper');
    await page.getByRole('checkbox', { name: 'teacher', exact: true }).check();
    await page.getByRole('button', { name: 'Invite' }).click();
    await page.getByText('mailed an invitation').waitFor();
    // What a role allows, as the catalogue's sentences: one role opened.
    await page.locator('details').filter({ has: page.locator('summary code', { hasText: /^teacher$/ }) }).locator('summary').click();
    await shoot(page, 'people');

    await page.goto(`${origin}/admin/integrations/oauth-clients`);
    await page.getByLabel('Name').fill('Gradebook app');
    await page.getByLabel('Type').selectOption('public');
    await page.getByLabel('Redirect URIs').fill('http://127.0.0.1:7777/callback');
    for (const scope of ['courses:read', 'courses:write', 'audit:read']) await page.getByLabel(scope, { exact: true }).check();
    await page.getByRole('button', { name: 'Register client' }).click();
    await page.getByTestId('new-client-id').waitFor();
    await shoot(page, 'oauth-clients');

    // The app sends the signed-in administrator to consent: each scope, what her roles let it do there, the warning.
    const clientId = (await page.getByTestId('new-client-id').textContent())!.trim();
    const challenge = createHash('sha256').update('screenshots only, never exchanged').digest('base64url');
    const authorize = new URL(`${origin}/oauth/authorize`);
    for (const [k, v] of Object.entries({ client_id: clientId, redirect_uri: 'http://127.0.0.1:7777/callback', response_type: 'code', scope: 'courses:read courses:write audit:read', state: 'screenshot', code_challenge: challenge, code_challenge_method: 'S256' })) authorize.searchParams.set(k, v);
    await page.goto(authorize.toString());
    await page.getByRole('heading', { name: 'Allow Gradebook app to act as you?' }).waitFor();
    await shoot(page, 'consent');

    await page.goto(`${origin}/admin/integrations/mcp`);
    await shoot(page, 'mcp');

    // Everything done above, as the audit log shows it.
    await page.goto(`${origin}/admin/audit`);
    await shoot(page, 'audit');

    await page.goto(`${origin}/docs/errors/validation.invalid_body`);
    await shoot(page, 'error-page');

    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, javaScriptEnabled: false, storageState: await context.storageState() });
    const small = await phone.newPage();
    await small.goto(`${origin}/admin/integrations/api-keys`);
    await shoot(small, 'api-keys-phone');
  } finally {
    await browser.close();
  }
} finally {
  server.kill('SIGTERM');
  await receiver.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
