// Runs the plugin as an operator would: a real `tollgate serve` with a manifest naming this package's
// file, a stand-in OpenAI upstream on 127.0.0.1, and the gateway's CLI and admin API to make a key and
// read the log row back. Run with `npm test` after `npm install` (which links Tollgate, the
// devDependency); TOLLGATE_BIN may name another gateway's bin/tollgate.js.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PLUGIN = fileURLToPath(new URL('../index.mjs', import.meta.url));
const BIN = process.env.TOLLGATE_BIN ?? join(dirname(fileURLToPath(import.meta.resolve('tollgate/package.json'))), 'bin', 'tollgate.js');
const ADMIN_PASSWORD = 'example-admin-password';

const dir = mkdtempSync(join(tmpdir(), 'request-tag-'));
const dataDir = join(dir, 'data');
let upstream;
let gateway;
let origin;
let apiKey;

/** A stand-in OpenAI upstream: every chat completion answers "Hello". */
function startUpstream() {
  const server = createServer((req, res) => {
    req.resume().on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({
        id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
      }));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function tollgate(...args) {
  const result = spawnSync(process.execPath, [BIN, ...args, '--data-dir', dataDir, '--json'], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`tollgate ${args.join(' ')}: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

before(async () => {
  upstream = await startUpstream();
  // The gateway's example manifest (its `${OPENAI_API_KEY}` references are read when the gateway starts).
  const example = JSON.parse(readFileSync(join(dirname(BIN), '..', 'tollgate.example.json'), 'utf8'));
  example.plugins.find((p) => p.name === 'logger').config.flushIntervalMs = 20;
  example.plugins.splice(example.plugins.length - 1, 0, { module: PLUGIN, config: { allowedTags: ['search', 'chat'] } });
  writeFileSync(join(dir, 'tollgate.json'), JSON.stringify(example));
  tollgate('users', 'create', '--name', 'alice');
  apiKey = tollgate('keys', 'create', '--user', 'alice').key;
  gateway = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir, '--config', join(dir, 'tollgate.json')], {
    env: { ...process.env, OPENAI_BASE_URL: `http://127.0.0.1:${upstream.address().port}/v1`, OPENAI_API_KEY: 'sk-stand-in', TOLLGATE_ADMIN_PASSWORD: ADMIN_PASSWORD },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  origin = await new Promise((resolve, reject) => {
    let out = '';
    gateway.stdout.on('data', (d) => {
      out += d;
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve(match[1]);
    });
    gateway.once('exit', (code) => reject(new Error(`the gateway exited (${code}):\n${out}`)));
  });
});

after(() => {
  gateway?.kill('SIGTERM');
  upstream?.close();
});

function chat(headers = {}) {
  return fetch(`${origin}/api/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, ...headers },
    body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }] }),
  });
}

/** The log row of `requestId` through the admin API, once the gateway's logger wrote it. */
async function logRow(requestId) {
  const login = await fetch(`${origin}/admin/api/login`, {
    method: 'POST', headers: { 'content-type': 'application/json', origin }, body: JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD }),
  });
  assert.equal(login.status, 200);
  const cookie = login.headers.get('set-cookie').split(';')[0];
  for (;;) {
    const page = await (await fetch(`${origin}/admin/api/logs?limit=50`, { headers: { cookie } })).json();
    const row = page.data.find((r) => r.request_id === requestId);
    if (row) return (await fetch(`${origin}/admin/api/logs/${row.id}`, { headers: { cookie } })).json();
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('an answer carries the tag, and its log row has the tag', async () => {
  const response = await chat({ 'x-request-tag': 'search' });
  assert.equal(response.status, 200, await response.clone().text());
  assert.equal(response.headers.get('x-request-tag'), 'search');
  assert.equal((await response.json()).choices[0].message.content, 'Hello');
  const row = await logRow(response.headers.get('x-request-id'));
  assert.deepEqual(row.plugin_fields, { 'request-tag.tag': 'search' });
});

test('a request without a tag gets the default one', async () => {
  const response = await chat();
  assert.equal(response.headers.get('x-request-tag'), 'untagged');
});

test('a tag the config does not allow is refused with 400, in OpenAI\'s error shape', async () => {
  const response = await chat({ 'x-request-tag': 'marketing' });
  assert.equal(response.status, 400);
  assert.deepEqual((await response.json()).error, {
    message: 'x-request-tag must be one of: search, chat.', type: 'invalid_request_error', code: 'unknown_request_tag', param: 'x-request-tag',
  });
});

test('its metric is on /metrics', async () => {
  const text = await (await fetch(`${origin}/metrics`)).text();
  assert.match(text, /tollgate_plugin_request_tag_requests_total\{tag="search"\} [1-9]/);
});
