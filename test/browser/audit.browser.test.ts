// /admin/audit in a real browser (Chromium, JavaScript off: the page must work without it), driven by labels and
// link texts as a person drives it: reached from the menu, filtered through its GET form, paged with `Next page`.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { recordAudit } from '../../src/audit/audit-log.ts';
import { startTestApp, type TestContext } from '../support/harness.ts';
import { launchBrowser, newPage } from '../../testkit/browser.ts';

const PASSWORD = 'correct horse battery';

describe('audit log page in Chromium', () => {
  let t: TestContext;
  let browser: Browser;
  before(async () => {
    t = await startTestApp();
    await t.listen();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await t.close();
  });

  test('from the menu to a filtered list and its next page; a manager has neither the link nor the page', async () => {
    const org = await t.make.org({ address: `audit-${Math.random().toString(36).slice(2, 10)}.localhost` });
    // More than a page (50) of older entries, so that the list has a next page.
    const base = { organisationId: org.id, actor: { type: 'system' as const, id: null, name: 'operator' }, credential: { kind: 'cli' as const, id: null }, via: 'cli' as const, target: null, outcome: 'success' as const, status: 200, requestId: null, ip: null, userAgent: null, changedFields: [] };
    for (let i = 0; i < 55; i++) await recordAudit(t.database.db, { ...base, action: 'atrium org update' }, new Date(Date.now() - (55 - i) * 60_000));
    const caller = await t.make.caller({ org });
    const section = await t.make.section(org);
    const patched = await t.api.request({ host: org.address, key: caller.key, method: 'PATCH', path: `/sections/${section.id}`, body: { title: 'Seen in the log' } });
    assert.equal(patched.status, 200);

    const admin = await t.make.person(org, { roles: ['admin'], password: PASSWORD, name: 'Ada Admin' });
    const { context, page } = await newPage(browser);
    try {
      await page.goto(`${t.originOf(org.address)}/login`);
      await page.getByLabel('Email').fill(admin.email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('link', { name: 'Audit log' }).first().click();
      await page.getByRole('heading', { name: 'Audit log' }).waitFor();

      // Newest first: the sign-in just now, then the PATCH, with its actor, credential, path and target.
      const rows = page.locator('tbody tr');
      assert.match(await rows.nth(0).innerText(), /sign_in/);
      const patchRow = await rows.nth(1).innerText();
      for (const expected of ['Test Person', 'api_key', 'rest', 'updateSection', 'title', 'section', section.id, 'success', '200']) assert.ok(patchRow.includes(expected), `${expected} in ${patchRow}`);
      assert.doesNotMatch(await page.content(), /Seen in the log/);

      // A filter is a query parameter of a GET form: the view is a link.
      await page.getByLabel('Action').fill('updateSection');
      await page.getByRole('button', { name: 'Filter' }).click();
      assert.match(page.url(), /\/admin\/audit\?(.*&)?action=updateSection/);
      assert.equal(await rows.count(), 1);
      assert.equal(await page.getByRole('link', { name: 'Next page' }).count(), 0);

      // A bad time is refused next to its field, with the value kept.
      await page.getByLabel('Since').fill('last tuesday');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.locator('.field-error').first().waitFor();
      assert.equal(await page.getByLabel('Since').inputValue(), 'last tuesday');

      // Unfiltered, 57 entries: 50, then `Next page` with the rest, oldest last.
      await page.getByRole('link', { name: 'Clear filters' }).click();
      assert.equal(await rows.count(), 50);
      const firstPageIds = await page.locator('tbody tr').allInnerTexts();
      await page.getByRole('link', { name: 'Next page' }).click();
      assert.equal(await rows.count(), 7);
      assert.ok(!firstPageIds.includes(await rows.nth(0).innerText()));
      assert.equal(await page.getByRole('link', { name: 'Next page' }).count(), 0);
    } finally {
      await context.close();
    }

    // Without audit/view: no menu entry, and the page itself is refused.
    const manager = await t.make.person(org, { roles: ['manager'], password: PASSWORD });
    const other = await newPage(browser);
    try {
      await other.page.goto(`${t.originOf(org.address)}/login`);
      await other.page.getByLabel('Email').fill(manager.email);
      await other.page.getByLabel('Password').fill(PASSWORD);
      await other.page.getByRole('button', { name: 'Sign in' }).click();
      await other.page.getByRole('heading', { name: 'Administration' }).waitFor();
      assert.equal(await other.page.getByRole('link', { name: 'Audit log' }).count(), 0);
      const refused = await other.page.goto(`${t.originOf(org.address)}/admin/audit`);
      assert.equal(refused?.status(), 403);
    } finally {
      await other.context.close();
    }
  });
});
