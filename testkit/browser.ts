// Chromium for page tests (CONVENTIONS: browser tests): Debian's /usr/bin/chromium driven by playwright-core,
// which never downloads a browser. No browser there is a failure, never a skip: `.ci/run` installs it.
import fs from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** One browser per test file; `args` adds to the defaults (e.g. `--host-resolver-rules=MAP *.test 127.0.0.1`). */
export async function launchBrowser(options: { args?: string[] } = {}): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`No browser at ${CHROMIUM}: install Debian's chromium (apt-get install -y chromium), as .ci/run does.`);
  return chromium.launch({
    executablePath: CHROMIUM,
    // As root in a container Chromium needs --no-sandbox; the rest keep it from calling Google's services.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', ...(options.args ?? [])],
  });
}

/** A fresh context (cookies, storage) per test; JavaScript off, since the pages work without it. */
export async function newPage(browser: Browser, options: { javaScript?: boolean } = {}): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ javaScriptEnabled: options.javaScript ?? false });
  const page = await context.newPage();
  return { context, page };
}

/** Organisation addresses in tests (`org-….test`) resolve to the test's server on 127.0.0.1. */
export const TEST_HOSTS_ON_LOOPBACK = '--host-resolver-rules=MAP *.test 127.0.0.1';

export interface GuardedContext {
  context: BrowserContext;
  /** Requests aimed anywhere but the test's own server, each aborted. */
  foreign: string[];
  /** Content-Security-Policy violations and page errors reported on the console. */
  consoleErrors: string[];
}

const isLoopback = (host: string) => host === '127.0.0.1' || host === 'localhost' || host === '[::1]';

/**
 * A fresh context (JavaScript on) whose every request is routed through the test: to `allowedHosts`
 * (host:port, on loopback) or loopback it goes on; anything else is aborted and recorded, so a page that
 * reaches another host fails its test.
 */
export async function guardedContext(browser: Browser, allowedHosts: string[]): Promise<GuardedContext> {
  const context = await browser.newContext();
  const foreign: string[] = [];
  const consoleErrors: string[] = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    const own = (url.protocol === 'http:' || url.protocol === 'https:') && (allowedHosts.includes(url.host) || isLoopback(url.hostname));
    if (own || url.protocol === 'data:' || url.protocol === 'blob:') return route.continue();
    foreign.push(url.href);
    return route.abort('blockedbyclient');
  });
  context.on('page', (page) => {
    page.on('console', (m) => void (m.type() === 'error' && consoleErrors.push(m.text())));
    page.on('pageerror', (e) => consoleErrors.push(e.message));
  });
  return { context, foreign, consoleErrors };
}
