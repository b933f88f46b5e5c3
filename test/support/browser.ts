// A real Chromium (Debian's, at /usr/bin/chromium) for the pages' browser tests, with every request it makes
// routed through the test: requests to the test's own server (an organisation address mapped to loopback) go
// on, anything else is aborted and recorded, so a page that reaches another host fails its test. No browser
// is a failure, never a skip: CI installs it (.ci/run).
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** One browser per test file. `*.test` host names resolve to 127.0.0.1, as organisation addresses do in tests. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync', '--host-resolver-rules=MAP *.test 127.0.0.1'],
  });
}

export interface GuardedContext {
  context: BrowserContext;
  /** Requests aimed anywhere but the test's own server, each aborted. */
  foreign: string[];
  /** Content-Security-Policy violations and page errors reported on the console. */
  consoleErrors: string[];
}

const isLoopback = (host: string) => host === '127.0.0.1' || host === 'localhost' || host === '[::1]';

/** A fresh context whose pages may reach only `allowedHosts` (host:port) on loopback. */
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
