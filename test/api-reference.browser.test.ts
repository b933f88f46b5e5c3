/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The API reference in a real Chromium: it renders every operation of the document, shows the revision asked
// for, and loads nothing from another host (every request the page makes is routed through the test, and any
// that is not for the test's own server fails it), with no Content-Security-Policy violation.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Browser, Page, Response } from 'playwright-core';
import Type from 'typebox';
import { defineOperation } from '../src/operations/operation.ts';
import { createRevisions, type RevisionChange } from '../src/operations/revisions.ts';
import { operations } from '../src/all-operations.ts';
import { referenceAnchor } from '../src/openapi/html.ts';
import { guardedContext, launchBrowser, TEST_HOSTS_ON_LOOPBACK, type GuardedContext } from '../testkit/browser.ts';
import { startTestApp, type TestContext } from './support/harness.ts';

// A revision of the test's own: on 2027-01-01 a widget's `name` became `title`.
const widget = defineOperation({
  id: 'testCreateWidget',
  method: 'POST',
  path: '/test_widgets',
  tag: 'Test widgets',
  summary: 'Create a widget',
  scope: 'courses:write',
  capability: 'course/update',
  writes: true,
  body: Type.Object({ title: Type.String({ minLength: 1, examples: ['Gear'] }) }, { additionalProperties: false }),
  bodyExample: { title: 'Gear' },
  success: { status: 201, schema: Type.Object({ title: Type.String() }, { additionalProperties: false }), description: 'The widget.' },
  errors: [422],
  handler: async (_ctx, { body }) => ({ title: body.title }),
});
const renamed: RevisionChange = {
  revision: '2027-01-01',
  description: 'Widgets: `name` is now `title`.',
  operations: [widget.id],
  upgradeRequest: ({ name, ...rest }) => ({ ...rest, title: name }),
  downgradeResponse: ({ title, ...rest }) => ({ ...rest, name: title }),
  downgradeRequestSchema: () => Type.Object({ name: Type.String({ minLength: 1, examples: ['Cog'] }) }, { additionalProperties: false }),
  downgradeResponseSchema: () => Type.Object({ name: Type.String() }, { additionalProperties: false }),
};

describe('API reference in a browser', () => {
  let browser: Browser;
  let t: TestContext;
  let origin: string;
  let host: string;
  let guard: GuardedContext;

  before(async () => {
    browser = await launchBrowser({ args: [TEST_HOSTS_ON_LOOPBACK] });
    t = await startTestApp({ operations: [widget], revisions: createRevisions([renamed]) });
    const { org } = await t.make.caller();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    host = `${org.address}:${(t.app.server.address() as AddressInfo).port}`;
    origin = `http://${host}`;
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  let lastResponse: Response | null = null;

  async function open(path: string, headers: Record<string, string> = {}): Promise<Page> {
    guard = await guardedContext(browser, [host]);
    if (Object.keys(headers).length > 0) await guard.context.setExtraHTTPHeaders(headers);
    const page = await guard.context.newPage();
    const response = await page.goto(`${origin}${path}`);
    lastResponse = response;
    assert.equal(response?.status(), 200);
    // The renderer has read the document once the API's title is a heading.
    await page.getByRole('heading', { name: 'Atrium learning-platform API' }).first().waitFor({ timeout: 30_000 });
    return page;
  }

  /**
   * Goes to an operation's anchor and waits until the reference has rendered the operation there. (Whether it
   * is also scrolled into view is left to the one full navigation below: the renderer's scroll-spy rewrites the
   * hash while it scrolls, so a check after each of a hundred quick hash changes would race it.)
   */
  async function showOperation(page: Page, op: { tag: string; id: string; summary: string }): Promise<void> {
    const anchor = referenceAnchor(op);
    await page.evaluate((hash) => void (location.hash = hash), anchor);
    const shown = await page
      .waitForFunction(
        (suffix) => {
          const el = document.querySelector(`[id$="${suffix}"]`);
          return el !== null && el.querySelector('h1, h2, h3, h4') !== null;
        },
        anchor,
        { timeout: 15_000 },
      )
      .then(() => true, () => false);
    const near = shown ? [] : await page.evaluate((id) => [...document.querySelectorAll('[id]')].map((e) => e.id).filter((i) => i.includes(id)).slice(0, 3).concat([location.hash]), op.id);
    assert.ok(shown, `${op.id}: #${anchor} does not show it (${near.join(', ')})`);
  }

  test('renders every operation of the document, each at its anchor', async () => {
    const page = await open('/api/v1/docs');
    // The sidebar lists every operation once its groups are open.
    const closed = page.getByRole('button', { name: /^Open Group - / });
    while ((await closed.count()) > 0) await closed.first().click();
    const sidebar = await page.evaluate(() => document.body.innerText);
    for (const op of [...operations, widget]) assert.ok(sidebar.includes(op.summary), `${op.id}: "${op.summary}" not listed`);
    // And each has its own anchor, `#tag/<tag>/<operationId>`, which the sidebar links to.
    const hrefs = new Set(await page.evaluate(() => [...document.querySelectorAll('a[href*="#"]')].map((a) => (a as HTMLAnchorElement).hash.slice(1))));
    for (const op of [...operations, widget]) assert.ok(hrefs.has(referenceAnchor(op)), `${op.id}: no link to #${referenceAnchor(op)}`);
    // Following one shows that operation.
    await showOperation(page, operations.find((o) => o.id === 'restoreWikiPageVersion')!);
    // A link from elsewhere (an error page) to an operation's anchor opens the page there.
    await page.goto(`${origin}/api/v1/docs#tag/sections/updateSection`);
    await page.getByRole('heading', { name: 'Rename a section, or show or hide it' }).first().waitFor();
    await page.waitForFunction(() => {
      const top = document.querySelector('[id$="tag/sections/updateSection"]')?.getBoundingClientRect().top;
      return top !== undefined && top > -200 && top < window.innerHeight;
    });
    assert.deepEqual(guard.foreign, []);
  });

  test('loads nothing from another host, and breaks no rule of its Content-Security-Policy', async () => {
    const page = await open('/api/v1/docs');
    // Use it as a person would: search, open an operation, open the test-request client.
    await page.keyboard.press('Control+k');
    await page.keyboard.type('restore');
    await page.keyboard.press('Escape');
    await showOperation(page, operations.find((o) => o.id === 'updateSection')!);
    await page.getByRole('button', { name: /Test Request/ }).first().click();
    await page.waitForLoadState('networkidle');
    assert.deepEqual(guard.foreign, [], 'requests to another host');
    assert.deepEqual(guard.consoleErrors.filter((e) => /Content.Security.Policy|Refused to/i.test(e)), []);
    const csp = lastResponse!.headers()['content-security-policy'];
    assert.match(csp, /script-src 'self'(;|$)/);
  });

  test('shows the revision asked for: ?version= or Service-Version, and the document of that revision', async () => {
    const old = await open('/api/v1/docs?version=2026-12-15');
    await old.getByText('v2026-11-01', { exact: true }).first().waitFor();
    assert.equal(await old.locator('#revision').inputValue(), '2026-11-01');
    await showOperation(old, widget);
    await old.getByText('"name": "Cog"').first().waitFor();
    assert.equal(await old.getByText('"title": "Gear"').count(), 0);

    const current = await open('/api/v1/docs');
    await current.getByText('v2027-01-01', { exact: true }).first().waitFor();
    await showOperation(current, widget);
    await current.getByText('"title": "Gear"').first().waitFor();

    const byHeader = await open('/api/v1/docs', { 'Service-Version': '2026-11-01' });
    await byHeader.getByText('v2026-11-01', { exact: true }).first().waitFor();
    assert.deepEqual(guard.foreign, []);
  });
});
