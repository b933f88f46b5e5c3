// The admin area in a real browser (Chromium), driven as a person drives it: by labels and button texts
// (docs/authentication.md#signing-in-and-the-admin-area), against the real app listening on loopback. Organisations live at
// `*.localhost` addresses, which Chromium resolves to loopback.
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { RoleName } from '../../src/access/capabilities.ts';
import type { Organisation } from '../../src/domain/organisations/organisations.repository.ts';
import { startTestApp, type TestContext } from '../support/harness.ts';
import { launchBrowser, newPage } from '../../testkit/browser.ts';

const PASSWORD = 'correct horse battery';

describe('admin area in Chromium', () => {
  let t: TestContext;
  let browser: Browser;
  let context: BrowserContext | undefined;
  before(async () => {
    t = await startTestApp();
    await t.listen();
    browser = await launchBrowser();
  });
  afterEach(async () => {
    await context?.close();
    context = undefined;
  });
  after(async () => {
    await browser?.close();
    await t.close();
  });

  const localOrg = (plan?: 'no-api') => t.make.org({ address: `school-${Math.random().toString(36).slice(2, 10)}.localhost`, plan });

  async function open(org: Organisation, path: string): Promise<Page> {
    const fresh = await newPage(browser);
    context = fresh.context;
    await fresh.page.goto(`${t.originOf(org.address)}${path}`);
    return fresh.page;
  }

  async function signIn(page: Page, email: string, password = PASSWORD) {
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  async function signedIn(org: Organisation, roles: RoleName[] = ['admin'], path = '/admin'): Promise<Page> {
    const person = await t.make.person(org, { roles, password: PASSWORD, name: 'Ada Admin' });
    const page = await open(org, path);
    await signIn(page, person.email);
    return page;
  }

  test('sign in: a wrong password is refused with the same message as an unknown e-mail; the right one reaches /admin', async () => {
    const org = await localOrg();
    const person = await t.make.person(org, { password: PASSWORD, name: 'Ada Admin' });
    const page = await open(org, '/admin');
    assert.match(page.url(), /\/login\?return_to=%2Fadmin$/);
    await signIn(page, person.email, 'not it');
    await page.getByText('Email or password is wrong.').waitFor();
    assert.equal(await page.getByLabel('Email').inputValue(), person.email, 'the e-mail is kept');
    assert.equal(await page.getByLabel('Password').inputValue(), '', 'the password is not');
    await signIn(page, 'nobody@example.test', 'not it');
    await page.getByText('Email or password is wrong.').waitFor();
    await signIn(page, person.email);
    await page.getByRole('heading', { name: 'Administration' }).waitFor();
    assert.match(page.url(), /\/admin$/);
    await page.getByText('Signed in as Ada Admin').waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  });

  test('lockout: after more than 10 failures the right password is refused too, with a 429 page', async () => {
    const org = await localOrg();
    const person = await t.make.person(org, { password: PASSWORD });
    // Every test's browser signs in from 127.0.0.1, which failures lock too: start and end with none counted.
    const unlock = () => t.database.db.deleteFrom('login_failures').execute();
    await unlock();
    try {
      const page = await open(org, '/login');
      for (let i = 0; i < 11; i++) {
        await signIn(page, person.email, `wrong ${i}`);
        await page.getByText('Email or password is wrong.').waitFor();
      }
      const [response] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/login') && r.request().method() === 'POST'), signIn(page, person.email)]);
      assert.equal(response.status(), 429);
      assert.ok(Number(response.headers()['retry-after']) > 0);
      await page.getByRole('heading', { name: 'Too many failed sign-ins' }).waitFor();
    } finally {
      await unlock();
    }
  });

  test('a key made on the page calls the REST API at once; revoked, it is refused with a 401', async () => {
    const org = await localOrg();
    const page = await signedIn(org, ['admin'], '/admin/integrations/api-keys');
    await page.getByLabel('Name').fill('Timetable sync');
    await page.getByLabel('courses:read', { exact: true }).check();
    await page.getByLabel('courses:write', { exact: true }).check();
    await page.getByLabel('Mode').selectOption('test');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.getByTestId('new-secret').textContent())!.trim();
    assert.match(key, /^atr_test_/);
    const me = await t.api.request({ host: org.address, key, path: '/me' });
    assert.equal(me.status, 200);
    assert.deepEqual(me.body.scopes, ['courses:read', 'courses:write']);
    await page.reload();
    assert.equal(await page.getByTestId('new-secret').count(), 0, 'shown once');
    const row = page.getByRole('row').filter({ hasText: 'Timetable sync' });
    await row.getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('API key revoked').waitFor();
    const refused = await t.api.request({ host: org.address, key, path: '/me' });
    assert.equal(refused.status, 401);
  });

  test('a teacher is refused the admin pages', async () => {
    const org = await localOrg();
    const page = await signedIn(org, ['teacher'], '/admin/integrations/api-keys');
    await page.getByRole('heading', { name: 'Not allowed' }).waitFor();
    const response = await page.goto(`${t.originOf(org.address)}/admin/webhooks`);
    assert.equal(response!.status(), 403);
  });

  test('a webhook endpoint added on the page is verified by the real receiver; its ping is in the log and can be resent', async () => {
    const org = await localOrg();
    const page = await signedIn(org, ['admin'], '/admin/webhooks');
    const path = `/browser/${Math.random().toString(36).slice(2)}`;
    await page.getByLabel('URL').fill(`${t.make.webhookUrl}${path}`);
    await page.getByLabel('Event types').fill('section.*\ncourse.created');
    await page.getByLabel('Description').fill('Timetable');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    assert.match((await page.getByTestId('new-secret').textContent())!, /^whsec_/);
    const [ping] = await t.receiver.waitFor(1, path);
    assert.equal(JSON.parse(ping.body).type, 'webhook.ping');
    const logged = page.getByRole('row').filter({ hasText: 'webhook.ping' });
    await logged.getByText('succeeded').waitFor();
    await logged.getByRole('button', { name: 'Resend' }).click();
    await page.getByText('queued again').waitFor();
    while ((await t.app.services.webhookDelivery.dispatch()) + (await t.app.services.webhookDelivery.deliver()) > 0);
    const both = await t.receiver.waitFor(2, path);
    assert.equal(both[1].headers['webhook-id'], ping.headers['webhook-id'], 'the same event again');
    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('button', { name: 'Enable' }).waitFor();
    await page.getByRole('link', { name: '← All endpoints' }).click();
    await page.getByRole("row").filter({ hasText: path }).getByText("disabled", { exact: true }).waitFor();
  });

  test('an extension switched off on the page is off in GET /extensions', async () => {
    const org = await localOrg();
    const page = await signedIn(org, ['admin'], '/admin/extensions');
    await page.getByLabel('wiki', { exact: true }).uncheck();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved: Wiki off.').waitFor();
    const caller = await t.make.caller({ org });
    const listed = await t.api.request({ host: org.address, key: caller.key, path: '/extensions' });
    assert.equal(listed.body.data.find((e: { id: string }) => e.id === 'mod_wiki').enabled, false);
    assert.equal(await page.getByLabel('wiki', { exact: true }).isChecked(), false);
  });

  test('an organisation without the API entitlement: creating a key is a 412 page naming commerce.plan_entitlement', async () => {
    const org = await localOrg('no-api');
    const page = await signedIn(org, ['admin'], '/admin/integrations/api-keys');
    await page.getByLabel('Name').fill('Export');
    await page.getByLabel('courses:read', { exact: true }).check();
    const [response] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.getByRole('button', { name: 'Create key' }).click()]);
    assert.equal(response.status(), 412);
    await page.getByText('commerce.plan_entitlement').waitFor();
  });

  test('the pages read well on a phone: no sideways scrolling of the page itself', async () => {
    const org = await localOrg();
    const person = await t.make.person(org, { password: PASSWORD });
    const phone = await browser.newContext({ viewport: { width: 375, height: 740 }, javaScriptEnabled: true });
    context = phone;
    const page = await phone.newPage();
    await page.goto(`${t.originOf(org.address)}/login`);
    await signIn(page, person.email);
    for (const path of ['/admin', '/admin/integrations/api-keys', '/admin/webhooks', '/admin/extensions']) {
      await page.goto(`${t.originOf(org.address)}${path}`);
      const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      assert.ok(Number(overflow) <= 0, `${path} scrolls sideways by ${overflow}px`);
    }
  });
});
