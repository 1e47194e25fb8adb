/**
 * The self-service portal page in real headless Chromium (Debian's, driven by playwright-core)
 * against the whole gateway: with a portal session cookie set directly (the OIDC sign-in comes later),
 * the page shows the user's budget, creates a key (shown once, with a copy button), lists it, and the
 * key works; without a session it shows the sign-in page. No page may log a console error.
 * Screenshots go to test-artifacts/portal-ui/ for a reviewer.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { HAVE_CHROMIUM, openBrowserPage } from '../helpers/browser.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { createPortalSessionStore, PORTAL_COOKIE } from '../../core/portal/portal-sessions.ts';

const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'portal-ui');

describe('the portal page in Chromium', { skip: HAVE_CHROMIUM ? false : 'Chromium is not installed' }, () => {
  let sim: OpenAISimulator;
  let tg: TestGateway;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let problems: string[] = [];

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    sim = await startOpenAISimulator();
    tg = await startTestGateway({ providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-shared' } }, portal: { enabled: true }, user: { budgetUsd: 12.5 } });
    ({ browser, page, problems } = await openBrowserPage({ width: 1280, height: 900 }));
    context = page.context();
  });

  after(async () => {
    await browser?.close();
    await tg?.close();
    await sim?.close();
  });

  test('without a session the page asks to sign in with the identity provider', async () => {
    await page.goto(`${tg.gateway.origin}/portal/`);
    const link = page.getByRole('link', { name: 'Sign in' });
    await link.waitFor();
    assert.equal(await link.getAttribute('href'), '/portal/auth/login');
    await page.screenshot({ path: join(ARTIFACTS, '01-sign-in.png'), fullPage: true });
  });

  test('with a session the page shows the budget, creates a key shown once, and lists it', async () => {
    const sessions = createPortalSessionStore(tg.gateway.store, Date.now, { idleMs: 3_600_000, maxMs: 3_600_000 });
    const { token } = await sessions.create(tg.userId, { ip: null, userAgent: null });
    await context.addCookies([{ name: PORTAL_COOKIE, value: token, url: `${tg.gateway.origin}/portal/`, httpOnly: true, sameSite: 'Strict' }]);
    await page.goto(`${tg.gateway.origin}/portal/`);
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    assert.equal(await page.getByTestId('budget-limit').innerText(), '$12.50');
    await page.getByRole('cell', { name: 'openai/gpt-4o-mini' }).waitFor();

    await page.getByLabel('Key name').fill('browser key');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByTestId('new-key');
    await shown.waitFor();
    const key = await page.getByTestId('new-key-value').innerText();
    assert.match(key, /^tg_/);
    await shown.getByRole('button', { name: 'Copy' }).waitFor();
    const row = page.getByTestId('keys').getByRole('row', { name: /browser key/ });
    await row.waitFor();
    assert.match(await row.innerText(), /active/);
    await page.screenshot({ path: join(ARTIFACTS, '02-key-created.png'), fullPage: true });

    // Shown once: gone after Done, and not on a reload.
    await shown.getByRole('button', { name: 'Done' }).click();
    await page.reload();
    await page.getByTestId('keys').getByRole('row', { name: /browser key/ }).waitFor();
    assert.equal((await page.content()).includes(key), false);

    const client = new OpenAI({ apiKey: key, baseURL: `${tg.gateway.origin}/api/v1`, maxRetries: 0 });
    const reply = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'from the portal key' }] });
    assert.equal(reply.choices[0]!.message.role, 'assistant');
    await page.reload();
    await page.getByTestId('requests').getByRole('row', { name: /browser key/ }).waitFor();
    await page.screenshot({ path: join(ARTIFACTS, '03-request-listed.png'), fullPage: true });
    assert.deepEqual(problems, []);
  });
});
