// Chromium for page tests (CONVENTIONS: browser tests): Debian's /usr/bin/chromium driven by playwright-core,
// which never downloads a browser. No browser there is a failure, never a skip: `.ci/run` installs it.
import fs from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export async function launchBrowser(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`No browser at ${CHROMIUM}: install Debian's chromium (apt-get install -y chromium), as .ci/run does.`);
  return chromium.launch({
    executablePath: CHROMIUM,
    // As root in a container Chromium needs --no-sandbox; the rest keep it from calling Google's services.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** A fresh context (cookies, storage) per test; JavaScript off, since the pages work without it. */
export async function newPage(browser: Browser, options: { javaScript?: boolean } = {}): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ javaScriptEnabled: options.javaScript ?? false });
  const page = await context.newPage();
  return { context, page };
}
