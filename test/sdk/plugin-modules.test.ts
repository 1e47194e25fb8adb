/**
 * Plugins written on the public SDK, loaded the way an operator loads them (docs/plugins.md): a plugin
 * file and a plugin package in a temporary folder outside the repository, named by `"module"` in a
 * manifest there, run by the real `tollgate serve` process, with the official SDKs as clients and the
 * OpenAI simulator upstream. `tollgate/plugin` resolves to the running gateway's own SDK; nothing is
 * installed in that folder but the package under test.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { simStreamText, startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/gateway-process.ts';
import { cliJson, runCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitForLogRow } from '../helpers/log-rows.ts';
import { defaultManifest } from '../../core/default-manifest.ts';

/** An operator's plugin: its mode per request comes from a header, so one gateway shows every outcome. */
const ACME_PLUGIN = `
import { definePlugin, gatewayError, logField } from 'tollgate/plugin';

export default definePlugin({
  name: 'acme-header',
  version: '1.2.3',
  description: 'Adds x-acme to every answer and acme.tagged to its log row.',
  configSchema: {
    type: 'object', additionalProperties: false,
    properties: { value: { type: 'string', default: 'hello', description: 'The x-acme header value.' } },
  },
  create(config, ctx) {
    const seen = ctx.metrics.counter({ name: 'requests_total', help: 'Requests the acme plugin saw.', labelNames: ['operation'] });
    return {
      onRequest(ex) {
        seen.inc({ operation: ex.operation });
        const mode = ex.headers['x-acme-mode'];
        if (mode === 'throw') throw new Error('acme-secret-stack-marker');
        if (mode === 'reject') return Promise.reject(new Error('acme-secret-stack-marker'));
        if (mode === 'slow') return new Promise((resolve) => setTimeout(resolve, 120_000).unref());
        if (mode === 'deny') throw gatewayError(403, 'acme_denied', 'Acme refuses this request.');
      },
      onResponseStart(ex) {
        ex.responseHeaders['x-acme'] = config.value;
        logField(ex, 'acme.tagged', true);
        logField(ex, 'acme.user', ex.principal ? ex.principal.gatewayUserName : null);
      },
    };
  },
});
`;

/** A plugin package with no version of its own: \`tollgate plugins list\` shows its package's. */
const STAMP_PACKAGE = `
import { definePlugin } from 'tollgate/plugin';
export default definePlugin({
  name: 'stamp',
  description: 'Stamps answers with x-stamp.',
  configSchema: { type: 'object', properties: {} },
  create: () => ({ onResponseStart(ex) { ex.responseHeaders['x-stamp'] = 'stamped'; } }),
});
`;

/**
 * A plugin that keeps each answer whole (\`onAnswer\`) and gives it again for the same messages
 * (\`replyAnswer\`): the two hooks a response cache is built on, in every dialect, streamed or not.
 */
const MEMO_PLUGIN = `
import { definePlugin, replyAnswer } from 'tollgate/plugin';
const answers = new Map();
const keyOf = (ex) => ex.request && ex.request.messages ? JSON.stringify(ex.request.messages.map((m) => [m.role, m.content])) : null;
export default definePlugin({
  name: 'memo',
  description: 'Answers a repeated question from memory.',
  configSchema: { type: 'object' },
  create: () => ({
    onRequest(ex) {
      const key = ex.headers['x-memo'] ? keyOf(ex) : null;
      const kept = key && answers.get(key);
      if (kept) return replyAnswer(kept, { 'x-memo': 'hit' });
    },
    onAnswer(ex, state, answer) {
      const key = ex.headers['x-memo'] ? keyOf(ex) : null;
      if (key) answers.set(key, answer);
    },
  }),
});
`;

/**
 * A plugin that rewrites text both ways: \`SECRET-<digits>\` leaves the request as \`[gone]\`, and
 * "OpenAI simulator" never reaches the client, even split across stream chunks (it holds the answer's
 * text back until the choice ends). Only for requests with \`x-redact\`.
 */
const REDACT_PLUGIN = `
import { definePlugin, logField } from 'tollgate/plugin';
export default definePlugin({
  name: 'redact',
  description: 'Rewrites request and answer text.',
  configSchema: { type: 'object' },
  create: () => ({
    createState: () => ({ held: new Map(), seen: 0 }),
    rewriteRequestText(ex, state, text) {
      if (!ex.headers['x-redact']) return text;
      logField(ex, 'seen', ++state.seen);
      return text.replace(/SECRET-[0-9]+/g, '[gone]');
    },
    rewriteAnswerText(ex, state, text, end, choice) {
      if (!ex.headers['x-redact']) return text;
      const held = (state.held.get(choice) ?? '') + text;
      if (!end) { state.held.set(choice, held); return ''; }
      state.held.delete(choice);
      return held.replace(/OpenAI simulator/g, '[redacted]');
    },
  }),
});
`;

type Entry = { name?: string; module?: string; config?: Record<string, unknown>; hookTimeoutMs?: number };

/** The default manifest with `extra` entries before the router, and a quick log flush. */
function manifestWith(...extra: Entry[]): unknown {
  const manifest = structuredClone(defaultManifest) as { plugins: Entry[] };
  manifest.plugins.find((p) => p.name === 'logger')!.config = { flushIntervalMs: 20 };
  manifest.plugins.splice(manifest.plugins.length - 1, 0, ...extra);
  return manifest;
}

/** A folder outside the repository with the plugin file, the plugin package and `manifest` as `name`. */
function operatorFolder(): string {
  const dir = tempDir('tollgate-operator-');
  writeFileSync(join(dir, 'acme-header.mjs'), ACME_PLUGIN);
  writeFileSync(join(dir, 'memo.mjs'), MEMO_PLUGIN);
  writeFileSync(join(dir, 'redact.mjs'), REDACT_PLUGIN);
  const pkg = join(dir, 'node_modules', '@acme', 'tollgate-plugin-stamp');
  mkdirSync(pkg, { recursive: true });
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: '@acme/tollgate-plugin-stamp', version: '0.4.0', type: 'module', exports: './index.mjs' }));
  writeFileSync(join(pkg, 'index.mjs'), STAMP_PACKAGE);
  return dir;
}

function writeManifest(dir: string, name: string, manifest: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(manifest, null, 2));
  return path;
}

let folder: string;
let dataDir: string;
let sim: OpenAISimulator;
let gateway: GatewayProcess;
let openai: OpenAI;
let anthropic: Anthropic;
let apiKey: string;

before(async () => {
  folder = operatorFolder();
  dataDir = join(folder, 'data');
  sim = await startOpenAISimulator();
  await cliJson(['users', 'create', '--name', 'operator-user'], { dataDir });
  const { key } = await cliJson<{ key: string }>(['keys', 'create', '--user', 'operator-user'], { dataDir });
  apiKey = key;
  const configPath = writeManifest(folder, 'tollgate.json', manifestWith(
    { module: './acme-header.mjs', config: { value: 'from-config' }, hookTimeoutMs: 500 },
    { module: '@acme/tollgate-plugin-stamp' },
    { module: './memo.mjs' },
    { module: './redact.mjs' },
  ));
  gateway = await startGatewayProcess({ dataDir, configPath, env: { OPENAI_BASE_URL: sim.baseUrl, OPENAI_API_KEY: 'sk-upstream-secret' } });
  openai = new OpenAI({ apiKey: key, baseURL: gateway.baseURL, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: key, baseURL: `${gateway.origin}/api`, maxRetries: 0 });
});

after(async () => {
  await gateway?.stop();
  await sim?.close();
});

const chat = (mode?: string) => openai.chat.completions.create(
  { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }] },
  mode ? { headers: { 'x-acme-mode': mode } } : {},
);

/** The log row of `requestId`, once the background logger wrote it. */
const logRow = (requestId: string) => waitForLogRow(dataDir, requestId);

async function metricsText(): Promise<string> {
  return (await fetch(`${gateway.origin}/metrics`)).text();
}

/** Expects `run` to fail with an API error and returns it. */
async function apiError(run: () => Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await run();
  } catch (err) {
    if (err instanceof OpenAI.APIError) return err;
    throw err;
  }
  assert.fail('expected an API error');
}

describe('a plugin loaded by "module" from the manifest\'s folder', () => {
  test('its hooks run: the header it adds, the fields it logs and its own metric', async () => {
    const { data, response } = await chat().withResponse();
    assert.equal(data.choices[0]!.message.role, 'assistant');
    assert.equal(response.headers.get('x-acme'), 'from-config');
    const row = await logRow(response.headers.get('x-request-id')!);
    assert.deepEqual(JSON.parse(row.plugin_fields as string), { 'acme.tagged': true, 'acme.user': 'operator-user' });
    assert.equal(row.error_plugin, null);
    const metrics = await metricsText();
    assert.match(metrics, /tollgate_plugin_acme_header_requests_total\{operation="chat.completions"\} [1-9]/);
    assert.match(metrics, /tollgate_plugin_hook_seconds_count\{plugin="acme-header",hook="onRequest"\} [1-9]/);
  });

  test('a package named by the manifest resolves from its folder', async () => {
    const { response } = await chat().withResponse();
    assert.equal(response.headers.get('x-stamp'), 'stamped');
  });

  test('a hook that throws: 500 plugin_error naming the plugin, no error text in the body, the row names it; the next request is served', async () => {
    for (const mode of ['throw', 'reject']) {
      const err = await apiError(() => chat(mode));
      assert.equal(err.status, 500);
      const body = err.error as { code: string; message: string; type: string };
      assert.equal(body.code, 'plugin_error');
      assert.match(body.message, /"acme-header" failed in onRequest/);
      assert.doesNotMatch(JSON.stringify(body), /acme-secret-stack-marker|at .*\.mjs/);
      const row = await logRow(err.requestID!);
      assert.equal(row.error_code, 'plugin_error');
      assert.equal(row.error_plugin, 'acme-header');
      assert.equal(row.status, 500);
    }
    // The process lives on and serves.
    assert.equal((await chat()).choices.length, 1);
    assert.match(await metricsText(), /tollgate_plugin_errors_total\{plugin="acme-header",hook="onRequest",reason="threw"\} 2/);
    assert.match(gateway.output(), /acme-secret-stack-marker/, 'the error itself goes to the server log');
  });

  test('a hook over its hookTimeoutMs fails the same way, and the gateway goes on', async () => {
    const err = await apiError(() => chat('slow'));
    assert.equal(err.status, 500);
    assert.equal((err.error as { code: string }).code, 'plugin_error');
    assert.match((err.error as { message: string }).message, /hookTimeoutMs \(500 ms\)/);
    assert.match(await metricsText(), /tollgate_plugin_errors_total\{plugin="acme-header",hook="onRequest",reason="timeout"\} 1/);
    assert.equal((await chat()).choices.length, 1);
  });

  test('on /messages a plugin failure and a plugin refusal come in Anthropic\'s error shape', async () => {
    const call = (mode: string) => fetch(`${gateway.origin}/api/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey, 'anthropic-version': '2023-06-01', 'x-acme-mode': mode },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const failed = await call('throw');
    assert.equal(failed.status, 500);
    const failure = await failed.json() as { type: string; error: { type: string; message: string } };
    assert.equal(failure.type, 'error');
    assert.match(failure.error.message, /"acme-header" failed/);
    const denied = await call('deny');
    assert.equal(denied.status, 403);
    const denial = await denied.json() as { type: string; error: { type: string; message: string } };
    assert.equal(denial.type, 'error');
    assert.equal(denial.error.message, 'Acme refuses this request.');
    // And the SDK client reads the gateway's answer as Anthropic's own.
    const message = await anthropic.messages.create({ model: 'openai/gpt-4o-mini', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(message.type, 'message');
  });

  test('a gatewayError a plugin throws is its answer, in the client\'s dialect', async () => {
    const err = await apiError(() => chat('deny'));
    assert.equal(err.status, 403);
    assert.deepEqual(err.error, { message: 'Acme refuses this request.', type: 'invalid_request_error', code: 'acme_denied', param: null });
    const row = await logRow(err.requestID!);
    assert.equal(row.error_code, 'acme_denied');
    assert.equal(row.error_plugin, null);
  });

  test('tollgate plugins list shows built-in and loaded plugins with their source, version and place', async () => {
    const rows = await cliJson<Array<{ name: string; source: string; version: string | null; position: number | null; sdk: boolean }>>(
      ['plugins', 'list', '--config', join(folder, 'tollgate.json')], { dataDir },
    );
    const byName = new Map(rows.map((r) => [r.name, r]));
    assert.deepEqual(
      { ...byName.get('acme-header'), description: undefined, path: undefined },
      { name: 'acme-header', source: './acme-header.mjs', version: '1.2.3', sdk: true, position: 9, description: undefined, path: undefined },
    );
    assert.equal(byName.get('stamp')!.version, '0.4.0', "a package plugin without a version of its own shows its package's");
    assert.equal(byName.get('stamp')!.source, '@acme/tollgate-plugin-stamp');
    assert.equal(byName.get('auth-guard')!.source, 'built-in');
    assert.equal(byName.get('provider-router')!.position, 13);
  });
});

describe('a plugin that keeps whole answers and answers locally (onAnswer, replyAnswer)', () => {
  test('an answer kept from a non-streamed call is given again, streamed or not, in every dialect, and billed nothing', async () => {
    const question = [{ role: 'user' as const, content: 'What is kept?' }];
    const first = await openai.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: question }, { headers: { 'x-memo': '1' } }).withResponse();
    assert.equal(first.response.headers.get('x-memo'), null);
    const upstreamCalls = sim.requests.length;

    const again = await openai.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: question }, { headers: { 'x-memo': '1' } }).withResponse();
    assert.equal(again.response.headers.get('x-memo'), 'hit');
    assert.equal(again.data.choices[0]!.message.content, first.data.choices[0]!.message.content);
    assert.equal(again.response.headers.get('x-acme'), 'from-config', 'the plugins entered before it still shape the answer');

    const streamed = await openai.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: question, stream: true }, { headers: { 'x-memo': '1' } });
    let text = '';
    for await (const chunk of streamed) text += chunk.choices[0]?.delta.content ?? '';
    assert.equal(text, first.data.choices[0]!.message.content);

    const message = await anthropic.messages.create({ model: 'openai/gpt-4o-mini', max_tokens: 50, messages: question }, { headers: { 'x-memo': '1' } });
    assert.deepEqual(message.content, [{ type: 'text', text: first.data.choices[0]!.message.content, citations: null }].map(({ citations: _c, ...block }) => block));
    assert.equal(sim.requests.length, upstreamCalls, 'the upstream was not called again');

    const row = await logRow(again.response.headers.get('x-request-id')!);
    assert.equal(row.status, 200);
    assert.equal(row.cost_nanos, 0);
    assert.equal(row.prompt_tokens, 0);
    assert.equal(row.completion_tokens, 0);
  });

  test('an answer kept from a stream is the stream\'s chunks joined', async () => {
    const question = [{ role: 'user' as const, content: 'What streams?' }];
    const stream = await openai.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: question, stream: true }, { headers: { 'x-memo': '1' } });
    let streamedText = '';
    for await (const chunk of stream) streamedText += chunk.choices[0]?.delta.content ?? '';
    const again = await openai.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: question }, { headers: { 'x-memo': '1' } }).withResponse();
    assert.equal(again.response.headers.get('x-memo'), 'hit');
    assert.equal(again.data.choices[0]!.message.content, streamedText);
    assert.equal(again.data.choices[0]!.finish_reason, 'stop');
  });
});

describe('a plugin that rewrites request and answer text (rewriteRequestText, rewriteAnswerText)', () => {
  const ask = { role: 'user' as const, content: 'My code is SECRET-1234, keep it.' };

  test('the request goes upstream rewritten, and the answer comes back rewritten, not streamed', async () => {
    const before = sim.requests.length;
    const completion = await openai.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [ask] }, { headers: { 'x-redact': '1' } });
    assert.equal(completion.choices[0]!.message.content, 'Hello from the [redacted].');
    const sent = sim.requests.slice(before).find((r) => r.path.endsWith('/chat/completions'))!;
    assert.deepEqual((sent.body!.messages as Array<{ content: string }>).map((m) => m.content), ['My code is [gone], keep it.']);
    assert.doesNotMatch(sent.rawBody, /SECRET-1234/);
  });

  test('a natively relayed stream is rewritten even where the text spans chunks', async () => {
    const stream = await openai.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [ask], stream: true, stream_options: { include_usage: true } }, { headers: { 'x-redact': '1' } });
    let text = '';
    let usage = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }
    assert.equal(text, simStreamText().replace('OpenAI simulator', '[redacted]'));
    assert.ok(usage && usage.completion_tokens > 0, 'the stream still ends with its usage');
  });

  test('the Anthropic dialect: request text rewritten in the client\'s own body, answer rewritten', async () => {
    const { data: message, response } = await anthropic.messages.create(
      { model: 'openai/gpt-4o-mini', max_tokens: 50, system: 'Never say SECRET-99.', messages: [ask] }, { headers: { 'x-redact': '1' } },
    ).withResponse();
    assert.deepEqual(message.content.map((block) => (block.type === 'text' ? block.text : block.type)), ['Hello from the [redacted].']);
    const sent = sim.requests.at(-1)!;
    assert.doesNotMatch(sent.rawBody, /SECRET-/);
    // Both forms (the canonical request and the client's Messages body) are rewritten, yet the hook
    // sees each of the two texts once.
    const row = await logRow(response.headers.get('request-id') ?? response.headers.get('x-request-id')!);
    assert.equal((JSON.parse(row.plugin_fields as string) as { seen?: number }).seen, 2);
  });
});

describe('a manifest whose plugin modules are wrong', () => {
  test('a config its schema refuses: check and serve exit 1 naming the plugin and the field', async () => {
    const path = writeManifest(folder, 'bad-config.json', manifestWith({ module: './acme-header.mjs', config: { value: 5, colour: 'red' } }));
    const check = await runCli(['check', '--config', path]);
    assert.equal(check.code, 1);
    assert.match(check.stderr, /\/plugins\/8\/config\/value: must be string \(plugin "acme-header"\)/);
    assert.match(check.stderr, /\/plugins\/8\/config\/colour: unknown field \(plugin "acme-header"\)/);
    const serve = await runCli(['serve', '--port', '0', '--config', path], { dataDir: tempDir() });
    assert.equal(serve.code, 1);
    assert.match(serve.stderr, /\/plugins\/8\/config\/value: must be string \(plugin "acme-header"\)/);
  });

  test('modules that are missing, not plugins, of another SDK version or named like a built-in are all reported at once', async () => {
    writeFileSync(join(folder, 'not-a-plugin.mjs'), 'export const hello = 1;\n');
    writeFileSync(join(folder, 'future.mjs'), "export default { apiVersion: 2, name: 'future', description: '', configSchema: {}, create() {} };\n");
    writeFileSync(join(folder, 'clash.mjs'), "import { definePlugin } from 'tollgate/plugin';\nexport default definePlugin({ name: 'logger', description: '', configSchema: {}, create: () => ({}) });\n");
    writeFileSync(join(folder, 'broken.mjs'), 'export default {\n');
    const path = writeManifest(folder, 'bad-modules.json', manifestWith(
      { module: './missing.mjs' }, { module: './not-a-plugin.mjs' }, { module: './future.mjs' }, { module: './clash.mjs' }, { module: './broken.mjs' },
      { module: '@acme/not-installed' }, { name: 'acme', module: './acme-header.mjs' }, { name: 'logger', hookTimeoutMs: 10 },
    ));
    const check = await runCli(['check', '--config', path]);
    assert.equal(check.code, 1);
    const lines = check.stderr;
    assert.match(lines, /\/plugins\/8\/module: "\.\/missing\.mjs": cannot find it/);
    assert.match(lines, /\/plugins\/9\/module: "\.\/not-a-plugin\.mjs": its default export is not a plugin/);
    assert.match(lines, /\/plugins\/10\/module: "\.\/future\.mjs": it was written for plugin API version 2; this gateway runs version 1/);
    assert.match(lines, /\/plugins\/11\/module: "\.\/clash\.mjs": its name "logger" is a built-in plugin's/);
    assert.match(lines, /\/plugins\/12\/module: "\.\/broken\.mjs": failed to load/);
    assert.match(lines, /\/plugins\/13\/module: "@acme\/not-installed": cannot find it/);
    assert.match(lines, /\/plugins\/14\/name: the module's plugin is named "acme-header", not "acme"/);
    assert.match(lines, /\/plugins\/15\/hookTimeoutMs: applies only to plugins written on the plugin SDK/);
  });
});
