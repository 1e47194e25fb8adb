/**
 * Real headless Chromium for the UI tests (Debian's `chromium`, or `TOLLGATE_CHROMIUM`), driven by
 * playwright-core: one place for the executable, its flags, the console watch every UI test asserts
 * on (an error or warning in the console is a failure), and the admin UI's password sign-in.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { TEST_ADMIN } from './admin-client.ts';

export const CHROMIUM = process.env.TOLLGATE_CHROMIUM || ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path)) || '/usr/bin/chromium';
export const HAVE_CHROMIUM = existsSync(CHROMIUM);
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** A browser with one page; `problems` collects console errors and warnings and page errors. */
export interface BrowserPage {
  browser: Browser;
  page: Page;
  problems: string[];
  close(): Promise<void>;
}

/**
 * Launches Chromium with one page of `viewport`, a 15 s default timeout and the console watch. A
 * `Failed to load resource … 401` is expected (a signed-out probe) and not a problem.
 */
export async function openBrowserPage(viewport = { width: 1366, height: 900 }): Promise<BrowserPage> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const page = await (await browser.newContext({ viewport })).newPage();
  page.setDefaultTimeout(15_000);
  const problems: string[] = [];
  page.on('console', (message) => {
    if (/^Failed to load resource: .* status of 401/.test(message.text())) return;
    if (message.type() === 'error' || message.type() === 'warning') problems.push(`console.${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  return { browser, page, problems, close: () => browser.close() };
}

/** Opens the admin UI of `origin` and signs in with the test admin's password. */
export async function signInToAdmin(page: Page, origin: string): Promise<void> {
  await page.goto(`${origin}/admin/`);
  await page.getByLabel('Username').fill(TEST_ADMIN.username);
  await page.getByLabel('Password').fill(TEST_ADMIN.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}
