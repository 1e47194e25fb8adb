/**
 * The admin UI's Audit page in headless Chromium (issue 43, item 4): rows written by admin API calls
 * are listed newest first with their actor and action, the action filter narrows them, the chain's
 * state is shown, and the CSV link carries the filter. Skipped without Chromium (see admin-ui.test.ts).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { loginAdmin, TEST_ADMIN } from '../helpers/admin-client.ts';

const CHROMIUM = process.env.TOLLGATE_CHROMIUM || ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path)) || '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

describe('the Audit page in Chromium', { skip: existsSync(CHROMIUM) ? false : 'Chromium is not installed' }, () => {
  let tg: TestGateway;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  before(async () => {
    tg = await startTestGateway({ providers: { openai: { type: 'openai', baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'sk-shared-not-used' } } });
    const admin = await loginAdmin(tg.gateway.origin);
    const user = await admin.post('/admin/api/users', { name: 'audit-ui-user' });
    assert.equal(user.status, 201);
    assert.equal((await admin.patch(`/admin/api/users/${user.body.id}`, { budget_limit_usd: 3 })).status, 200);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    page = await (await browser.newContext({ viewport: { width: 1366, height: 768 } })).newPage();
    page.setDefaultTimeout(15_000);
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') problems.push(`console.${message.type()}: ${message.text()}`);
    });
    page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  });

  after(async () => {
    await browser?.close();
    await tg?.close();
  });

  test('lists the rows newest first, filters them by action, and shows the chain intact', async () => {
    await page.goto(`${tg.gateway.origin}/admin/`);
    await page.getByLabel('Username').fill(TEST_ADMIN.username);
    await page.getByLabel('Password').fill(TEST_ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.getByRole('link', { name: 'Audit' }).click();
    await page.getByTestId('audit-row').first().waitFor();
    const actions = await page.getByTestId('audit-action').allInnerTexts();
    // Newest first: this browser's sign-in, the API's update and create, the API client's sign-in.
    assert.deepEqual(actions, ['session.login', 'users.update', 'users.create', 'session.login']);
    assert.match(await page.getByTestId('audit-chain').innerText(), /4 rows, chain intact/);
    await page.getByLabel('Action').fill('users.update');
    await page.locator('[data-testid="audit-action"]', { hasText: 'users.create' }).waitFor({ state: 'detached' });
    assert.deepEqual(await page.getByTestId('audit-action').allInnerTexts(), ['users.update']);
    assert.match(page.url(), /#\/audit\?action=users\.update$/);
    assert.equal(await page.getByTestId('audit-csv').getAttribute('href'), '/admin/api/audit.csv?action=users.update');
    assert.deepEqual(problems, []);
  });
});
