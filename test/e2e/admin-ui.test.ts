/**
 * The admin web UI in real headless Chromium (Debian's, driven by playwright-core) against the whole
 * gateway and the OpenAI simulator: an admin logs in, creates a gateway user with a budget and a key,
 * the key is used with the official openai SDK, the request shows in the usage logs and on the
 * dashboard, the CSV export holds it, a price is set and used by the cost calculator, the key is
 * tested and revoked (the next SDK request is refused), the admin changes their password on the
 * Account page, logs out, and only the new password signs in. No page may log a console error.
 * Screenshots of every page go to test-artifacts/admin-ui/ for a reviewer.
 *
 * Without Chromium (`TOLLGATE_CHROMIUM`, else Debian's /usr/bin/chromium) one test fails with the
 * line that says how to install it, and the rest are skipped instead of each failing on its own.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { chromium, type Browser, type Page } from 'playwright-core';
import { parse } from 'csv-parse/sync';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { TEST_ADMIN } from '../helpers/admin-client.ts';
import { manualClock, type ManualClock } from '../helpers/test-gateway.ts';
import { writeLogRows } from '../helpers/log-rows.ts';

const CHROMIUM = process.env.TOLLGATE_CHROMIUM || ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path)) || '/usr/bin/chromium';
const HAVE_CHROMIUM = existsSync(CHROMIUM);
const NO_CHROMIUM = 'Chromium is not installed: `apt-get install chromium` (Debian/Ubuntu) or set TOLLGATE_CHROMIUM=/path/to/chrome';
const NEW_PASSWORD = 'e2e new admin password';
const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'admin-ui');
// The flags Chromium needs on a machine without outside network (see the env notes in the README).
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

test('chromium is installed', () => {
  if (HAVE_CHROMIUM) return;
  // One line, no stack: the fix is an install, not a code change.
  const error = new Error(NO_CHROMIUM);
  error.stack = NO_CHROMIUM;
  throw error;
});

describe('the admin UI in Chromium', { skip: HAVE_CHROMIUM ? false : 'Chromium is not installed' }, () => {
  let sim: OpenAISimulator;
  let tg: TestGateway;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  async function shot(name: string): Promise<void> {
    await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  }

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    sim = await startOpenAISimulator();
    tg = await startTestGateway({ providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-shared' } }, config: { budget: { timeZone: 'Europe/Paris' } } });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    const context = await browser.newContext({ viewport: { width: 1366, height: 768 }, acceptDownloads: true });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('console', (message) => {
      // Chromium reports every non-2xx fetch as "Failed to load resource". A wrong password's 401 is
      // the login form's answer, on purpose; the shell's question "is anyone signed in?" must not 401.
      if (/^Failed to load resource: .* status of 401/.test(message.text()) && message.location().url.endsWith('/admin/api/login')) return;
      // The Account page's wrong-current-password check is a 400 the form shows, on purpose.
      if (/^Failed to load resource: .* status of 400/.test(message.text()) && message.location().url.endsWith('/admin/api/account/password')) return;
      if (message.type() === 'error' || message.type() === 'warning') problems.push(`console.${message.type()}: ${message.text()}`);
    });
    page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  });

  after(async () => {
    await browser?.close();
    await tg?.close();
    await sim?.close();
  });

  let userUrl = '';
  let key = '';
  let requestId = '';

  test('an admin logs in', async () => {
    await page.goto(`${tg.gateway.origin}/admin/`);
    await page.getByLabel('Username').waitFor();
    await shot('01-login');
    await page.getByLabel('Username').fill(TEST_ADMIN.username);
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await assert.doesNotReject(page.getByRole('alert').filter({ hasText: 'Wrong username or password' }).waitFor());
    await page.getByLabel('Password').fill(TEST_ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.getByTestId('stat-requests').waitFor();
    await shot('02-dashboard-empty');
  });

  test('creates a gateway user with a budget', async () => {
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByRole('button', { name: 'New user' }).first().click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Name').fill('e2e-alice');
    await dialog.getByLabel('Email').fill('alice@example.com');
    await dialog.getByLabel('Budget (USD)').fill('5');
    await dialog.getByLabel('Budget period').selectOption('monthly');
    await dialog.getByLabel('Concurrent requests').fill('3');
    await dialog.getByRole('button', { name: 'Create user' }).click();
    await page.getByRole('heading', { name: 'e2e-alice' }).waitFor();
    userUrl = page.url();
    assert.match(userUrl, /#\/users\/\d+$/);
    const stored = await tg.gateway.store.db.selectFrom('gateway_users').selectAll().where('name', '=', 'e2e-alice').executeTakeFirstOrThrow();
    assert.equal(stored.budget_limit_micros, 5_000_000);
    assert.equal(stored.email, 'alice@example.com');
    assert.equal(stored.max_concurrent, 3);
    assert.match(await page.locator('.stat', { hasText: 'Concurrent requests' }).innerText(), /^Concurrent requests\s+3$/);
  });

  test('the budget\'s reset time is shown in the budget\'s time zone, named', async () => {
    const resets = page.getByTestId('resets-at');
    await resets.waitFor();
    // A monthly budget resets at midnight on the 1st in Europe/Paris, whatever the browser's zone.
    assert.match(await resets.innerText(), /\b1, \d{4}, (12:00\sAM|00:00)\s+\(Europe\/Paris\)$/);
    // The period began at that midnight too: Nov 1 in Paris, though Oct 31 in UTC.
    assert.match(await page.getByText(/^since /).innerText(), /^since \w+ 1, \d{4} \(Europe\/Paris\)$/);
  });

  test('creates a key, shown once, and the key works with the openai SDK', async () => {
    await page.getByRole('button', { name: 'New key' }).first().click();
    await page.getByRole('dialog').getByLabel('Key name').fill('e2e key');
    await page.getByRole('dialog').getByLabel('Tags').fill('project=e2e, cost-center=7');
    await page.getByRole('dialog').getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByTestId('new-key');
    await shown.waitFor();
    key = /tg_[A-Za-z0-9_-]{43}/.exec(await shown.innerText())?.[0] ?? '';
    assert.ok(key, 'the new key is displayed');
    await shot('04-key-created');
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByTestId('key-row').first().waitFor();
    assert.equal(await page.getByTestId('key-tags').first().innerText(), 'cost-center=7 project=e2e');

    const client = new OpenAI({ apiKey: key, baseURL: `${tg.gateway.origin}/api/v1`, maxRetries: 0 });
    const { data, response } = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello from the e2e test' }] }).withResponse();
    assert.equal(data.object, 'chat.completion');
    requestId = response.headers.get('x-request-id')!;
    await tg.logRow(requestId);
  });

  test('the key test reports an authenticated key with its budget', async () => {
    await page.goto(userUrl);
    await page.getByTestId('key-row').first().getByRole('button', { name: 'Test' }).click();
    const result = page.getByTestId('key-test-result');
    await result.waitFor();
    await assert.doesNotReject(result.filter({ hasText: '200' }).waitFor());
    await shot('03-user');
  });

  test('the request shows in the usage logs, with a detail view', async () => {
    await page.getByRole('link', { name: 'Usage logs' }).click();
    const row = page.getByTestId('log-row').filter({ hasText: 'e2e-alice' });
    await row.first().waitFor();
    assert.equal(await row.count(), 1);
    await shot('05-logs');
    await row.first().click();
    const dialog = page.getByRole('dialog');
    await assert.doesNotReject(dialog.filter({ hasText: requestId }).waitFor());
    // The detail adds the upstream attempts and what the cost was computed from (usage report, billed price).
    await assert.doesNotReject(dialog.getByTestId('log-attempts').waitFor());
    await assert.doesNotReject(dialog.getByTestId('log-usage-reported').waitFor());
    await assert.doesNotReject(dialog.filter({ hasText: 'cost-center=7, project=e2e' }).waitFor());
    await shot('06-log-detail');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
  });

  test('the CSV export holds the same rows, header first', async () => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export CSV' }).click()]);
    const path = await download.path();
    const rows = parse<Record<string, string>>(readFileSync(path), { columns: true });
    const mine = rows.filter((r) => r.request_id === requestId);
    assert.equal(mine.length, 1);
    assert.equal(mine[0]!.user_name, 'e2e-alice');
    assert.equal(mine[0]!.status, '200');
    assert.equal(mine[0]!.model_requested, 'gpt-4o-mini');
  });

  test('the dashboard counts the request', async () => {
    await page.getByRole('link', { name: 'Dashboard' }).click();
    const requests = page.getByTestId('stat-requests').locator('.stat-value');
    await assert.doesNotReject(requests.filter({ hasText: /^\s*1\s*$/ }).waitFor());
    await assert.doesNotReject(page.getByText('e2e-alice').first().waitFor());
    await shot('07-dashboard');
  });

  test('the dashboard lists a budget alert with its delivery state', async () => {
    // An alert as the budget plugin records it (without a webhook: state "unsent").
    const user = await tg.gateway.store.db.selectFrom('gateway_users').select('id').where('name', '=', 'e2e-alice').executeTakeFirstOrThrow();
    const firedAt = new Date().toISOString();
    const payload = { type: 'budget.threshold', user: { id: user.id, name: 'e2e-alice' }, period: { start: '2026-01-01T00:00:00.000Z', end: null },
      spent_nanos: 4_000_000_000, spent_usd: 4, limit_nanos: 5_000_000_000, limit_usd: 5, threshold_percent: 80, fired_at: firedAt };
    await tg.gateway.store.db.insertInto('budget_alerts').values({ gateway_user_id: user.id, period_start: payload.period.start, threshold_percent: 80,
      fired_at: firedAt, payload: JSON.stringify(payload), state: 'unsent', attempts: 0, next_attempt_at: null, delivered_at: null, last_error: null }).execute();
    await page.getByRole('button', { name: 'Refresh' }).click();
    const row = page.getByTestId('recent-alerts').locator('tbody tr').first();
    await assert.doesNotReject(row.filter({ hasText: 'e2e-alice' }).filter({ hasText: '80 %' }).filter({ hasText: 'no webhook' }).waitFor());
    await shot('07b-dashboard-alerts');
  });

  test('sets a price and the cost calculator uses it', async () => {
    await page.getByRole('link', { name: 'Pricing' }).click();
    await page.getByRole('button', { name: 'New price' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Model', { exact: true }).fill('e2e-model');
    await dialog.getByLabel('Input $/M', { exact: true }).fill('1');
    await dialog.getByLabel('Output $/M', { exact: true }).fill('2');
    await dialog.getByRole('button', { name: 'Save price' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByLabel('Search models').fill('e2e-model');
    await page.getByTestId('price-row').filter({ hasText: 'e2e-model' }).waitFor();
    await page.getByLabel('Calculator model').fill('e2e-model');
    await page.getByLabel('Input tokens', { exact: true }).fill('1000000');
    await page.getByLabel('Cached input tokens').fill('0');
    await page.getByLabel('Output tokens', { exact: true }).fill('500000');
    await page.getByRole('button', { name: 'Calculate' }).click();
    await assert.doesNotReject(page.getByTestId('calc-result').filter({ hasText: '$2.00' }).waitFor());
    await shot('08-pricing');
  });

  test('previews and applies a re-pricing of past requests', async () => {
    await page.getByLabel('Re-price model').fill('gpt-4o-mini');
    await page.getByLabel('From', { exact: true }).fill('2020-01-01');
    await page.getByRole('button', { name: 'Preview' }).click();
    const preview = page.getByTestId('reprice-result').filter({ hasText: /Would re-price \d+ of \d+ requests/ });
    await assert.doesNotReject(preview.waitFor());
    await page.getByRole('button', { name: 'Apply' }).click();
    await assert.doesNotReject(page.getByTestId('reprice-result').filter({ hasText: /Re-priced \d+ of \d+ requests/ }).waitFor());
  });

  test('revoking the key makes the next SDK request fail with 401', async () => {
    await page.goto(userUrl);
    await page.getByTestId('key-row').first().getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
    await assert.doesNotReject(page.getByTestId('key-row').first().filter({ hasText: /revoked/i }).waitFor());
    const client = new OpenAI({ apiKey: key, baseURL: `${tg.gateway.origin}/api/v1`, maxRetries: 0 });
    await assert.rejects(client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'still there?' }] }), (err: InstanceType<typeof OpenAI.APIError>) => {
      assert.equal(err.status, 401);
      return true;
    });
  });

  test('the admin changes their password on the Account page', async () => {
    await page.getByRole('link', { name: /Account/ }).click();
    await page.getByRole('heading', { name: 'Change password' }).waitFor();
    await page.getByLabel('Current password').fill('not my password');
    await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
    await page.getByLabel('Repeat the new password').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Change password' }).click();
    await assert.doesNotReject(page.getByText('The current password is wrong.').waitFor());
    await page.getByLabel('Current password').fill(TEST_ADMIN.password);
    await page.getByRole('button', { name: 'Change password' }).click();
    await assert.doesNotReject(page.getByText(/^Password changed\./).waitFor());
    assert.equal(await page.getByLabel('Current password').inputValue(), '');
    await shot('09-account');
  });

  test('logging out returns to the login page and ends the session', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Username').waitFor();
    const me = await page.request.get(`${tg.gateway.origin}/admin/api/me`);
    assert.equal(me.status(), 401);
  });

  test('the old password no longer signs in; the new one does', async () => {
    await page.getByLabel('Username').fill(TEST_ADMIN.username);
    await page.getByLabel('Password').fill(TEST_ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await assert.doesNotReject(page.getByRole('alert').filter({ hasText: 'Wrong username or password' }).waitFor());
    await page.getByLabel('Password').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Username').waitFor();
  });

  test('no page logged a console error or an uncaught exception', () => {
    assert.deepEqual(problems, []);
  });
});

/**
 * What a new user meets on a first look: a dashboard that names the providers and counts as errors
 * only what the gateway or a provider failed, an hourly chart for the last 24 hours, dated log rows, a
 * refused request not said to be "reported by the provider", an upstream health page whose error rate
 * and last error agree, a price list that opens on the configured providers, filters readable on a
 * phone, and a sign-in page with a clean console.
 */
describe('the admin UI at first look', { skip: HAVE_CHROMIUM ? false : 'Chromium is not installed' }, () => {
  let sim: OpenAISimulator;
  let tg: TestGateway;
  let clock: ManualClock;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];
  let refusedId = '';

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    sim = await startOpenAISimulator();
    // Ten minutes ago, so the failure below is older than the upstream health page's 5-minute window.
    clock = manualClock(Date.now() - 10 * 60_000);
    tg = await startTestGateway({
      providers: {
        openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-shared' },
        anthropic: { type: 'anthropic', baseUrl: sim.baseUrl },
        ollama: { type: 'ollama', baseUrl: sim.baseUrl },
      },
      clock,
    });
    const messages = [{ role: 'user' as const, content: 'hi' }];
    sim.fault({ model: 'gpt-4o-mini' }, 500);
    await assert.rejects(tg.client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages }), OpenAI.APIError);
    sim.fault({ model: 'gpt-4o-mini' }, null);
    clock.advance(6 * 60_000);
    await tg.client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages });
    // Refused by the provider as the request's own mistake (404), and by the gateway's budget (402).
    await assert.rejects(tg.client.chat.completions.create({ model: 'openai/sim-404', messages }), OpenAI.APIError);
    refusedId = `req_refused_${process.pid}`;
    await writeLogRows(tg.gateway.store, [{
      request_id: refusedId, gateway_user_id: tg.userId, api_key_id: tg.keyId, provider: 'openai', model_requested: 'openai/gpt-4o-mini',
      model_served: null, status: 402, error_code: 'budget_exceeded', prompt_tokens: null, completion_tokens: null, cost_nanos: null,
      created_at: new Date(clock()).toISOString(),
    }]);
    await tg.logRowsOf('openai/sim-404', 1);
    await tg.logRowsOf('openai/gpt-4o-mini', 3);

    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    page = await (await browser.newContext({ viewport: { width: 1366, height: 768 } })).newPage();
    page.setDefaultTimeout(15_000);
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') problems.push(`console.${message.type()}: ${message.text()} (${message.location().url})`);
    });
    page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  });

  after(async () => {
    await browser?.close();
    await tg?.close();
    await sim?.close();
  });

  test('the sign-in page logs nothing in the console', async () => {
    await page.goto(`${tg.gateway.origin}/admin/`);
    await page.getByLabel('Username').waitFor();
    const onSignIn = problems.splice(0);
    await page.getByLabel('Username').fill(TEST_ADMIN.username);
    await page.getByLabel('Password').fill(TEST_ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('stat-requests').waitFor();
    assert.deepEqual(onSignIn, []);
  });

  test('the dashboard lists the providers and who can use each', async () => {
    const rows = page.getByTestId('providers').locator('tbody tr');
    await rows.first().waitFor();
    assert.deepEqual(await rows.evaluateAll((trs) => trs.map((tr) => [tr.getAttribute('data-provider'), tr.querySelector('.badge')!.textContent!.trim()])), [
      ['openai', 'shared key'], ['anthropic', 'users\' own keys only'], ['ollama', 'no key needed'],
    ]);
  });

  test('the error rate counts the provider\'s failure, not the budget\'s 402 nor the unknown model\'s 404', async () => {
    const foot = page.getByTestId('stat-error-rate').locator('.stat-foot');
    assert.equal((await foot.innerText()).trim(), '1 of 4; refusals not counted');
    assert.equal((await page.getByTestId('stat-error-rate').locator('.stat-value').innerText()).trim(), '25%');
    await page.screenshot({ path: join(ARTIFACTS, '10-dashboard-first-look.png'), fullPage: true });
  });

  test('"Last 24 hours" draws one point per hour', async () => {
    await page.getByLabel('Period').selectOption('24h');
    const chart = page.locator('[data-testid="usage-chart"][data-unit="hour"]');
    await chart.waitFor();
    assert.ok((await chart.locator('g.point').count()) >= 24);
    assert.match(await chart.locator('title').first().textContent() ?? '', /per hour/);
    await page.screenshot({ path: join(ARTIFACTS, '10b-dashboard-24h.png'), fullPage: false });
  });

  test('log rows show their date, and a request refused before any provider is not "reported by the provider"', async () => {
    await page.getByRole('link', { name: 'Usage logs' }).click();
    const rows = page.getByTestId('log-row');
    await rows.first().waitFor();
    const today = await page.evaluate(() => new Date().toLocaleDateString(undefined, { month: 'short', day: 'numeric' }));
    const when = await page.evaluate(() => new Date(Date.now() - 4 * 60_000).toLocaleDateString(undefined, { month: 'short', day: 'numeric' }));
    const first = (await rows.first().locator('td').first().innerText()).trim();
    assert.ok(first.startsWith(`${when} `) || first.startsWith(`${today} `), first);
    await rows.filter({ hasText: '402' }).first().click();
    const source = page.getByRole('dialog').getByTestId('log-usage-source');
    await assert.doesNotReject(source.filter({ hasText: 'none: the request was not sent to a provider' }).waitFor());
    await page.keyboard.press('Escape');
  });

  test('upstream health: a last error older than the error window is dated, and the rate does not read 0 %', async () => {
    await page.getByRole('link', { name: 'Upstream health' }).click();
    const row = page.locator('[data-testid="deployments"] tr[data-deployment="openai/gpt-4o-mini"]');
    await row.waitFor();
    const cells = await row.locator('td').allInnerTexts();
    // Deployment, breaker, open until, attempts, errors, p50, last error.
    assert.equal(cells[3]!.trim(), '1');
    assert.equal(cells[4]!.trim(), 'none');
    assert.match(cells[6]!, /^upstream_error \(500\)\s+\d+ min ago$/);
  });

  test('the price list opens on the configured providers\' models', async () => {
    await page.getByRole('link', { name: 'Pricing' }).click();
    const firstRows = page.getByTestId('price-row');
    await firstRows.first().waitFor();
    const providers = await firstRows.locator('.price-provider').allInnerTexts();
    assert.ok(providers.length > 0);
    assert.ok(providers.slice(0, 10).every((p) => ['openai', 'anthropic', 'ollama', 'any'].includes(p.trim())), providers.slice(0, 10).join(', '));
  });

  test('on a phone (390 px) every log filter shows its whole value', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    // The narrow sidebar shows icons only.
    await page.goto(`${tg.gateway.origin}/admin/#/logs`);
    await page.locator('.filter-grid select').first().waitFor();
    // In the page (the DOM's types are not this project's: `any`).
    const clipped = await page.locator('.filter-grid select').evaluateAll((selects) => selects.flatMap((select: any) => {
      const win = globalThis as any;
      const style = win.getComputedStyle(select);
      const context = win.document.createElement('canvas').getContext('2d');
      context.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
      const text = select.selectedOptions[0]?.textContent ?? '';
      const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      return context.measureText(text).width > room ? [`${select.id}: "${text}" needs ${Math.ceil(context.measureText(text).width)} px, has ${room}`] : [];
    }));
    await page.screenshot({ path: join(ARTIFACTS, '11-logs-phone.png'), fullPage: true });
    assert.deepEqual(clipped, []);
  });

  test('no page logged a console error or an uncaught exception', () => {
    assert.deepEqual(problems, []);
  });
});
