/**
 * The real Gemini CLI against the gateway's Gemini endpoint, run as a user would:
 * `gemini -p <task> --yolo --output-format json` with `GEMINI_API_KEY=<gateway key>` and
 * `GOOGLE_GEMINI_BASE_URL=<gateway>/api` (the CLI's Gen AI SDK appends `/v1beta/models/...`), a
 * throwaway HOME and working directory, no stdin, nothing but 127.0.0.1 to talk to. Gemini CLI 0.61
 * first asks its model router (`gemini-3.5-flash-lite:generateContent`, JSON output with
 * `responseJsonSchema`) how complex the task is, then streams the turns
 * (`<model>:streamGenerateContent?alt=sse`, `functionDeclarations`) to the model the router chose. The
 * simulator plays a scripted agent (`agent` in test/helpers/gemini-simulator.ts): the router gets a
 * JSON choice, the first turn a `functionCall` to the CLI's `write_file` tool, the next one (with its
 * `functionResponse`) the final text. Natively passed through to the Gemini simulator, and translated
 * to the OpenAI simulator (the router's `models` map sending the CLI's models to `openai/gpt-4o-mini`),
 * which refuses what OpenAI refuses: the `topK` the CLI always sends, and its router's upper-case
 * `"type": "OBJECT"` schema (the translation drops the one and lower-cases the other).
 *
 * The CLI is installed by `node bin/install-test-tools.js` (pinned, outside node_modules; .ci/run
 * does it). Without it the tests skip, unless `CI` is set: then they fail.
 * - `~/.gemini/settings.json` (`GEMINI_SETTINGS` in test/helpers/agent-runs.ts): the auth type `gemini-api-key` (else it asks how to log
 *   in), usage statistics, telemetry and update checks off (else it talks to Google).
 * - `GEMINI_CLI_TRUST_WORKSPACE=true`: headless mode refuses an untrusted folder.
 * - `--yolo`: tool calls run without asking (in `-p` mode an unapproved call is refused).
 */
import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { killAll } from '../helpers/agent-cli.ts';
import { skipWithout, testTool } from '../helpers/test-tools.ts';
import { startTestGateway, type LogRow, type TestGateway } from '../helpers/test-gateway.ts';
import { dataDirWithPrices, type TestPrice } from '../helpers/prices.ts';
import { eventually } from '../helpers/eventually.ts';
import { SIM_USAGE, startGeminiSimulator, type GeminiSimulator } from '../helpers/gemini-simulator.ts';
import { SIM_USAGE as OPENAI_USAGE, startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import type { RecordedRequest } from '../helpers/sim-http.ts';
import { AGENT, assertGeminiCliDone, runGeminiCli } from '../helpers/agent-runs.ts';

/** The router's model and the ones it may choose in Gemini CLI 0.61, all at one price so every row costs the same. */
const GEMINI_MODELS = ['gemini-3.5-flash-lite', 'gemini-3.8-flash', 'gemini-3.1-pro-preview'];
const PRICE = { input: 0.3, cachedInput: 0.03, output: 2.5 };
/** What every simulated answer costs: (21 − 6) × $0.30 + 6 × $0.03 + (9 + 4) × $2.50 per million, in nano-USD. */
const COST_NANOS = 15 * 300 + 6 * 30 + 13 * 2500;
const TRANSLATED = 'openai/gpt-4o-mini';

const gemini = testTool('gemini');
const skip = skipWithout([[gemini, 'Gemini CLI']]);

let sim: GeminiSimulator;
let openai: OpenAISimulator;
let tg: TestGateway;
/** A second gateway whose router sends Gemini CLI's models to OpenAI. */
let translating: TestGateway;
/** What reached the gateway: method and URL. */
const received: Array<{ method: string; url: string }> = [];

before(async () => {
  sim = await startGeminiSimulator({ agent: AGENT });
  const prices: TestPrice[] = GEMINI_MODELS.map((model) => ({ model, provider: 'gemini', ...PRICE }));
  tg = await startTestGateway({
    dataDir: await dataDirWithPrices(prices),
    providers: { gemini: { type: 'gemini', baseUrl: sim.baseUrl, apiKey: 'gm-upstream-key' } },
  });
  tg.gateway.server.server.on('request', (req) => {
    received.push({ method: req.method!, url: req.url! });
  });
  openai = await startOpenAISimulator({ agent: AGENT });
  translating = await startTestGateway({
    dataDir: await dataDirWithPrices([{ model: 'gpt-4o-mini', provider: 'openai', input: 0.15, output: 0.6, cachedInput: 0.075 }]),
    providers: { openai: { type: 'openai', baseUrl: openai.baseUrl, apiKey: 'sk-openai-upstream' } },
    router: { models: Object.fromEntries(GEMINI_MODELS.map((model) => [model, TRANSLATED])) },
  });
});
after(async () => {
  killAll(); // a run cut short by a failed assertion or a cancel
  await tg?.close();
  await translating?.close();
  await sim?.close();
  await openai?.close();
});

/** One diagnostic line per upstream request: path, tools, the kinds of parts in the last turn. */
function summarize(t: TestContext, requests: RecordedRequest[]): void {
  for (const r of requests) {
    const b = r.body ?? {};
    const tools = ((b.tools ?? []) as Array<{ functionDeclarations?: Array<{ name: string }> }>).flatMap((tool) => tool.functionDeclarations?.map((f) => f.name) ?? []);
    const last = ((b.contents ?? []) as Array<{ parts: Array<Record<string, unknown>> }>).at(-1)?.parts.map((part) => Object.keys(part).join('+'));
    t.diagnostic(`${r.method} ${r.path} tools=${tools.length} last=${last?.join(',')}`);
  }
}

/** The log rows after row `afterId`, once there are `count` of them. */
async function rowsAfter(gateway: TestGateway, afterId: number, count: number): Promise<LogRow[]> {
  let rows: LogRow[] = [];
  await eventually(async () => {
    rows = await gateway.gateway.store.db.selectFrom('llm_requests').selectAll().where('id', '>', afterId).orderBy('id').execute();
    assert.ok(rows.length >= count, `${rows.length} of ${count} log rows`);
  }, { timeoutMs: 30_000 });
  return rows;
}

async function lastRowId(gateway: TestGateway): Promise<number> {
  const row = await gateway.gateway.store.db.selectFrom('llm_requests').select('id').orderBy('id', 'desc').limit(1).executeTakeFirst();
  return row?.id ?? 0;
}

describe('Gemini CLI against the gateway', { skip }, () => {
  test('a task writing a file runs against a native Gemini upstream, each call logged and billed from usageMetadata', async (t) => {
    const first = sim.chatRequests().length;
    const firstReceived = received.length;
    const lastId = await lastRowId(tg);
    const run = await runGeminiCli(t, tg);
    const upstream = sim.chatRequests().slice(first);
    summarize(t, upstream);
    assertGeminiCliDone(run);

    const calls = received.slice(firstReceived).filter((c) => c.method === 'POST');
    assert.ok(calls.every((c) => /^\/api\/v1beta\/models\/[^/:]+:(generateContent|streamGenerateContent\?alt=sse)$/.test(c.url)), JSON.stringify(calls));
    const router = upstream.find((r) => r.path.endsWith(':generateContent'));
    assert.ok(router, 'the model router asked first');
    assert.ok((router.body!.generationConfig as { responseJsonSchema?: unknown }).responseJsonSchema, 'the router asks for JSON');
    const turns = upstream.filter((r) => r.path.endsWith(':streamGenerateContent'));
    assert.ok(turns.length >= 2, 'the tool call and the final answer');
    const last = turns.at(-1)!;
    assert.equal(last.headers['x-goog-api-key'], 'gm-upstream-key', 'the gateway\'s credential, never the client\'s key');
    assert.equal(last.query.alt, 'sse');
    const contents = last.body!.contents as Array<{ role: string; parts: Array<{ functionCall?: { name: string }; functionResponse?: { name: string } }> }>;
    assert.equal(contents.at(-2)!.parts[0]!.functionCall?.name, 'write_file');
    assert.equal(contents.at(-1)!.parts[0]!.functionResponse?.name, 'write_file', 'the tool\'s result comes back');

    const rows = await rowsAfter(tg, lastId, upstream.length);
    assert.equal(rows.length, upstream.length, 'one row per call, none for the model list');
    for (const row of rows) {
      assert.ok(GEMINI_MODELS.includes(row.model_requested ?? ''), String(row.model_requested));
      assert.equal(row.endpoint, row.stream ? 'gemini.streamGenerateContent' : 'gemini.generateContent');
      assert.equal(row.provider, 'gemini');
      assert.equal(row.status, 200);
      assert.equal(row.prompt_tokens, SIM_USAGE.promptTokenCount);
      assert.equal(row.completion_tokens, SIM_USAGE.candidatesTokenCount + SIM_USAGE.thoughtsTokenCount);
      assert.equal(row.cost_nanos, COST_NANOS);
    }
  });

  test('the same task runs on an OpenAI upstream through translation, topK dropped and the router\'s schema lower-cased', async (t) => {
    const first = openai.requests.length;
    const lastId = await lastRowId(translating);
    const run = await runGeminiCli(t, translating);
    const upstream = openai.requests.slice(first).filter((r) => r.path === '/v1/chat/completions');
    for (const r of upstream) t.diagnostic(`${r.method} ${r.path} tools=${(r.body!.tools as unknown[] | undefined)?.length ?? 0} last=${(r.body!.messages as Array<{ role: string }>).at(-1)!.role}`);
    assertGeminiCliDone(run);

    assert.ok(upstream.length >= 3, 'the router, the tool call and the final answer');
    assert.ok(upstream.every((r) => r.body!.model === 'gpt-4o-mini' && r.body!.top_k === undefined));
    const router = upstream.find((r) => r.body!.response_format)!;
    const schema = (router.body!.response_format as { json_schema: { schema: { type: string; properties: Record<string, { type: string }> } } }).json_schema.schema;
    assert.deepEqual([schema.type, schema.properties.complexity_score!.type], ['object', 'integer']);
    const last = upstream.at(-1)!.body!;
    assert.equal(last.stream, true);
    assert.ok((last.tools as Array<{ function: { name: string } }>).some((tool) => tool.function.name === 'write_file'));
    assert.equal((last.messages as Array<{ role: string }>).at(-1)!.role, 'tool', 'the tool\'s result comes back as a tool message');

    const rows = await rowsAfter(translating, lastId, upstream.length);
    assert.equal(rows.length, upstream.length);
    for (const row of rows) {
      assert.ok(GEMINI_MODELS.includes(row.model_requested ?? ''), String(row.model_requested));
      assert.equal(row.endpoint, row.stream ? 'gemini.streamGenerateContent' : 'gemini.generateContent');
      assert.equal(row.provider, 'openai');
      assert.equal(row.status, 200);
      assert.equal(row.completion_tokens, OPENAI_USAGE.completion_tokens);
      // (19 − 3) × $0.15 + 3 × $0.075 + 24 × $0.60 per million, in nano-USD.
      assert.equal(row.cost_nanos, 16 * 150 + 3 * 75 + 24 * 600);
    }
  });
});
