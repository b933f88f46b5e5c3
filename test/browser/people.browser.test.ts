// /admin/people and the invitation page in Chromium (docs/api-guide.md#users-roles-and-the-organisation), driven by labels and button
// texts: an administrator invites someone; the mail (a real SMTP server) holds the link; the invited person
// chooses a password and lands signed in on /admin; the link then is a 410 page. The same rules as the API:
// nobody suspends themselves, and a suspended person is signed out at once.
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { Organisation } from '../../src/domain/organisations/organisations.repository.ts';
import { startTestApp, type TestContext } from '../support/harness.ts';
import { launchBrowser, newPage } from '../../testkit/browser.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';
import { invitationLinkIn } from '../support/invitation-mail.ts';

const PASSWORD = 'correct horse battery';

describe('people and invitations in Chromium', () => {
  let t: TestContext;
  let smtp: TestSmtpServer;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  before(async () => {
    smtp = await startSmtpServer();
    t = await startTestApp({ env: { SMTP_URL: smtp.url } });
    await t.listen();
    browser = await launchBrowser();
  });
  afterEach(async () => {
    for (const c of contexts.splice(0)) await c.close();
  });
  after(async () => {
    await browser?.close();
    await t.close();
    await smtp.close();
  });

  const localOrg = () => t.make.org({ address: `people-${Math.random().toString(36).slice(2, 10)}.localhost` });

  async function open(url: string): Promise<Page> {
    const fresh = await newPage(browser);
    contexts.push(fresh.context);
    await fresh.page.goto(url);
    return fresh.page;
  }

  async function signedInAdmin(org: Organisation): Promise<Page> {
    const admin = await t.make.person(org, { roles: ['admin'], password: PASSWORD, name: 'Ada Admin' });
    const page = await open(`${t.originOf(org.address)}/login`);
    await page.getByLabel('Email').fill(admin.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Administration' }).waitFor();
    return page;
  }

  test('invite from /admin/people; the invited person sets a password and is signed in; the link is then a 410 page', async () => {
    const org = await localOrg();
    const page = await signedInAdmin(org);
    await page.getByRole('navigation', { name: 'Admin' }).getByRole('link', { name: 'People' }).click();
    await page.getByRole('heading', { name: 'People', exact: true }).waitFor();
    await page.getByLabel('Email').fill('grace@example.edu');
    await page.getByLabel('Name').fill('Grace Hopper');
    await page.getByRole('checkbox', { name: 'teacher', exact: true }).check();
    await page.getByRole('button', { name: 'Invite' }).click();
    await page.getByText('Grace Hopper was added and mailed an invitation').waitFor();
    const row = page.getByRole('row').filter({ hasText: 'grace@example.edu' });
    await row.getByText('active').waitFor();

    // The link points at the organisation's public origin: the port the test app listens on.
    const link = invitationLinkIn(smtp, 'grace@example.edu');
    const invited = await open(link);
    await invited.getByRole('heading', { name: 'Choose your password' }).waitFor();
    await invited.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await invited.getByLabel('Repeat password').fill('not the same');
    await invited.getByRole('button', { name: 'Set password' }).click();
    await invited.getByText('The two passwords differ').waitFor();
    await invited.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await invited.getByLabel('Repeat password').fill(PASSWORD);
    await invited.getByRole('button', { name: 'Set password' }).click();
    await invited.getByText('Signed in as Grace Hopper').waitFor();
    assert.match(invited.url(), /\/admin$/);

    const reused = await invited.goto(link);
    assert.equal(reused?.status(), 410);
    await invited.getByRole('heading', { name: 'This link no longer works' }).waitFor();
  });

  test('each role lists what it allows in sentences, readable without JavaScript: a <details> per role', async () => {
    const org = await localOrg();
    await t.database.db.transaction().execute((tx) => t.app.services.roles.create(tx, org.id, { key: 'grader', name: 'Graders', capabilities: ['enrol/view', 'audit/view'] }));
    const admin = await t.make.person(org, { roles: ['admin'], password: PASSWORD, name: 'Ada Admin' });
    const fresh = await newPage(browser, { javaScript: false });
    contexts.push(fresh.context);
    const page = fresh.page;
    await page.goto(`${t.originOf(org.address)}/login`);
    await page.getByLabel('Email').fill(admin.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.goto(`${t.originOf(org.address)}/admin/people`);
    await page.getByRole('heading', { name: 'Roles and what they allow' }).waitFor();
    const sentence = 'Read the audit log: who changed what, when, with which credential.';
    const grader = page.locator('details').filter({ hasText: 'Graders' });
    assert.equal(await grader.getByText(sentence).isVisible(), false, 'closed until asked');
    await grader.getByText('Graders').click();
    await grader.getByText(sentence).waitFor();
    await grader.getByText('See who is enrolled in which course, with which role and dates.').waitFor();
    const teacher = page.locator('details').filter({ has: page.locator('summary code', { hasText: /^teacher$/ }) });
    await teacher.locator('summary').click();
    await teacher.getByText('Restore an earlier version of a wiki page.').waitFor();
    assert.equal(await teacher.getByText(sentence).count(), 0, 'a teacher may not read the audit log');
  });

  test('suspend, roles and remove: nobody suspends themselves; a suspended person is signed out at once', async () => {
    const org = await localOrg();
    const page = await signedInAdmin(org);
    const teacher = await t.make.person(org, { roles: ['teacher'], password: PASSWORD, name: 'Tess Teacher' });
    const other = await open(`${t.originOf(org.address)}/login`);
    await other.getByLabel('Email').fill(teacher.email);
    await other.getByLabel('Password').fill(PASSWORD);
    await other.getByRole('button', { name: 'Sign in' }).click();
    await other.getByText('Signed in as Tess Teacher').waitFor();

    await page.goto(`${t.originOf(org.address)}/admin/people`);
    const me = page.getByRole('row').filter({ hasText: '(you)' });
    await me.getByRole('button', { name: /^Suspend/ }).click();
    await page.getByText('You cannot suspend yourself. (user.self)').waitFor();

    const row = () => page.getByRole('row').filter({ hasText: teacher.email });
    await row().getByLabel(`Manager for ${teacher.email}`).check();
    await row().getByRole('button', { name: /^Save roles/ }).click();
    await page.getByText('Roles of Tess Teacher: manager, teacher.').waitFor();

    await row().getByRole('button', { name: /^Suspend/ }).click();
    await page.getByText('Tess Teacher is suspended').waitFor();
    await other.reload();
    await other.getByRole('heading', { name: 'Sign in' }).waitFor();

    await row().getByRole('button', { name: /^Remove/ }).click();
    await page.getByText('Tess Teacher was removed').waitFor();
    assert.equal(await page.getByRole('row').filter({ hasText: teacher.email }).count(), 0);
  });
});
