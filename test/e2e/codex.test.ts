/**
 * The real Codex CLI against the gateway's Responses endpoint, run as a user would:
 * `codex exec --skip-git-repo-check <task>` with a `CODEX_HOME` whose config.toml declares the gateway
 * as a model provider (`wire_api = "responses"`, the key in `TOLLGATE_API_KEY`), a throwaway HOME and
 * working directory, no stdin, nothing but 127.0.0.1 to talk to. The simulators play a scripted agent
 * (test/helpers/sim-agent.ts): the first answer calls Codex's `exec_command` tool to write a file, the
 * next one (after its output) is the final text. Natively passed through to an OpenAI Responses
 * simulator, translated (Responses → chat → Anthropic and back) to an Anthropic one, and natively to
 * a deployment on a simulated Azure OpenAI resource (`azure/<deployment>`, the v1 API, `api-key`).
 *
 * The CLI is installed by `node bin/install-test-tools.js` (pinned, outside node_modules; .ci/run
 * does it). Without it the tests skip, unless `CI` is set: then they fail.
 * - `[analytics] enabled = false`: else Codex looks up ab.chatgpt.com; `[features] plugins = false`:
 *   else github.com, api.github.com and chatgpt.com (the plugin marketplace).
 * - The command runs in Codex's own sandbox (`--sandbox workspace-write`: its bundled bubblewrap, which
 *   needs unprivileged user namespaces); where `codex sandbox -- true` fails, unsandboxed
 *   (`--dangerously-bypass-approvals-and-sandbox`). `codex exec` never asks for approval.
 * - Codex always offers a `namespace` tool (multi_agent_v1), which a translated route flattens to
 *   function tools, and the built-in `web_search`, which it refuses; the header `x-tollgate-optional-tools: web_search` (Codex's `http_headers`) has it left out.
 */
import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { killAll } from '../helpers/agent-cli.ts';
import { skipWithout, testTool } from '../helpers/test-tools.ts';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { dataDirWithPrices } from '../helpers/prices.ts';
import { RESPONSES_USAGE, startResponsesSimulator, type ResponsesSimulator } from '../helpers/openai-responses-simulator.ts';
import { SIM_USAGE, startAnthropicSimulator, type AnthropicSimulator } from '../helpers/anthropic-simulator.ts';
import { AZURE_SIM_KEY, startAzureSimulator, type AzureSimulator } from '../helpers/azure-openai-simulator.ts';
import type { RecordedRequest } from '../helpers/sim-http.ts';
import { AGENT, assertCodexDone, codexConfig, runCodex } from '../helpers/agent-runs.ts';

const NATIVE = 'openai/gpt-5-mini';
const TRANSLATED = 'anthropic/claude-sonnet-4-5';
/** A deployment of gpt-5-mini on Azure (the simulator's `codex-prod`). */
const AZURE = 'azure/codex-prod';
interface ConfigExtra { topLevel?: string[]; provider?: string[]; features?: string[] }
/**
 * What a translated route needs: Codex's built-in `web_search` marked optional, so the translation
 * leaves it out (namespaced function tools are flattened).
 */
const OPTIONAL_WEB_SEARCH: ConfigExtra = { provider: ['http_headers = { "x-tollgate-optional-tools" = "web_search" }'] };

const codex = testTool('codex');
const skip = skipWithout([[codex, 'Codex']]);

let responses: ResponsesSimulator;
let anthropic: AnthropicSimulator;
let azure: AzureSimulator;
let tg: TestGateway;
/** What reached the gateway: method and URL. */
const received: Array<{ method: string; url: string }> = [];

before(async () => {
  responses = await startResponsesSimulator({ agent: AGENT });
  anthropic = await startAnthropicSimulator({ agent: AGENT });
  azure = await startAzureSimulator({ agent: AGENT });
  const dataDir = await dataDirWithPrices([
    { model: 'gpt-5-mini', provider: 'openai', input: 0.25, output: 2, cachedInput: 0.025 },
    { model: 'claude-sonnet-4-5', provider: 'anthropic', input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75 },
    // A deployment is priced as the model it runs (`deployments.<name>.model`), here at a price of Azure's own.
    { model: 'azure/gpt-5-mini', provider: 'azure', input: 0.3, output: 2.4, cachedInput: 0.03 },
  ]);
  tg = await startTestGateway({
    dataDir,
    providers: {
      openai: { type: 'openai', baseUrl: responses.baseUrl, apiKey: 'sk-openai-upstream' },
      anthropic: { type: 'anthropic', baseUrl: anthropic.baseUrl, apiKey: 'sk-ant-upstream' },
      azure: { type: 'azure', baseUrl: azure.endpoint, apiKey: AZURE_SIM_KEY, deployments: { 'codex-prod': { model: 'gpt-5-mini' } } },
    },
  });
  tg.gateway.server.server.on('request', (req) => {
    received.push({ method: req.method!, url: req.url! });
  });
});
after(async () => {
  killAll(); // a run cut short by a failed assertion or a cancel
  await tg?.close();
  await responses?.close();
  await anthropic?.close();
  await azure?.close();
});

/** config.toml: the gateway as the model provider (test/helpers/agent-runs.ts), nothing that talks to other hosts. */
const config = (model: string, extra: ConfigExtra = {}) => codexConfig(tg, model, extra);

/** One diagnostic line per upstream request: path, model, stream, tools, the kinds of input items. */
function summarize(t: TestContext, requests: RecordedRequest[]): void {
  for (const r of requests) {
    const b = r.body ?? {};
    const tools = ((b.tools ?? []) as Array<{ type: string; name?: string; function?: { name: string } }>).map((tool) => tool.name ?? tool.function?.name ?? tool.type);
    const items = ((b.input ?? b.messages ?? []) as Array<{ type?: string; role?: string }>).map((item) => item.type === 'message' || !item.type ? item.role : item.type);
    t.diagnostic(`${r.method} ${r.path} model=${String(b.model)} stream=${String(b.stream)} tools=${tools.join(',')} input=${items.join(',')}`);
  }
}

describe('Codex against the gateway', { skip }, () => {
  test('a task needing a tool call runs against a native OpenAI Responses upstream, billed as responses.create', async (t) => {
    const first = responses.requests.length;
    const firstReceived = received.length;
    const run = await runCodex(t, tg, config(NATIVE));
    const upstream = responses.requests.slice(first);
    summarize(t, upstream);
    assertCodexDone(run);

    const calls = received.slice(firstReceived);
    assert.ok(calls.length >= 2, 'the tool call and the final answer');
    assert.ok(calls.every((c) => c.method === 'POST' && c.url === '/api/v1/responses'), JSON.stringify(calls));
    assert.ok(upstream.every((r) => r.path === '/v1/responses'));
    const last = upstream.at(-1)!;
    assert.equal(last.body!.model, 'gpt-5-mini');
    assert.equal(last.body!.stream, true, 'Codex streams');
    assert.equal(last.headers.authorization, 'Bearer sk-openai-upstream');
    const tools = last.body!.tools as Array<{ type: string; name?: string }>;
    assert.ok(tools.some((tool) => tool.name === 'exec_command'));
    assert.ok(tools.some((tool) => tool.type === 'web_search'), 'built-in tools reach OpenAI unchanged');
    const input = last.body!.input as Array<{ type: string; call_id?: string }>;
    assert.equal(input.at(-1)!.type, 'function_call_output', 'the command\'s output comes back');

    const rows = await tg.logRowsOf(NATIVE, upstream.length);
    for (const row of rows) {
      assert.equal(row.endpoint, 'responses.create');
      assert.equal(row.provider, 'openai');
      assert.equal(row.status, 200);
      assert.equal(row.stream, 1);
      assert.equal(row.prompt_tokens, RESPONSES_USAGE.input_tokens);
      assert.equal(row.completion_tokens, RESPONSES_USAGE.output_tokens);
      // (21 − 5) × $0.25 + 5 × $0.025 + 13 × $2 per million, in nano-USD.
      assert.equal(row.cost_nanos, 16 * 250 + 5 * 25 + 13 * 2000);
    }
  });

  test('the same task runs on an Anthropic upstream through translation, billed as responses.create', async (t) => {
    const first = anthropic.requests.length;
    const firstNative = responses.requests.length;
    const run = await runCodex(t, tg, config(TRANSLATED, OPTIONAL_WEB_SEARCH));
    const upstream = anthropic.requests.slice(first).filter((r) => r.path === '/v1/messages');
    summarize(t, upstream);
    assertCodexDone(run);

    assert.equal(responses.requests.length, firstNative, 'nothing reached OpenAI');
    assert.ok(upstream.length >= 2, 'the tool call and the final answer');
    const last = upstream.at(-1)!.body!;
    assert.equal(last.model, 'claude-sonnet-4-5');
    assert.equal(last.stream, true);
    assert.ok((last.tools as Array<{ name: string }>).some((tool) => tool.name === 'exec_command'));
    const turns = last.messages as Array<{ role: string; content: Array<{ type: string }> }>;
    assert.ok(turns.at(-1)!.content.some((block) => block.type === 'tool_result'), 'the command\'s output comes back as a tool_result');

    const rows = await tg.logRowsOf(TRANSLATED, upstream.length);
    for (const row of rows) {
      assert.equal(row.endpoint, 'responses.create');
      assert.equal(row.provider, 'anthropic');
      assert.equal(row.status, 200);
      assert.equal(row.completion_tokens, SIM_USAGE.output_tokens);
      // 12 × $3 + 5 × $0.30 + 3 × $3.75 + 9 × $15, per million, in nano-USD.
      assert.equal(row.cost_nanos, 12 * 3000 + 5 * 300 + 3 * 3750 + 9 * 15000);
    }
  });

  test('with its default tools Codex is refused on a translated route, by a 400 naming the built-in web_search tool', async (t) => {
    const first = anthropic.requests.length;
    const run = await runCodex(t, tg, config(TRANSLATED));
    assert.notEqual(run.code, 0);
    t.diagnostic(run.stderr.split('\n').find((line) => line.startsWith('ERROR: ')) ?? '');
    const error = JSON.parse(/^ERROR: (\{.*\})$/m.exec(run.stderr)?.[1] ?? '{}') as { error?: { param: string; message: string } };
    assert.match(error.error?.param ?? '', /^tools\[\d+\]$/, run.stderr);
    assert.match(error.error!.message, /"web_search" tools cannot be translated/);
    assert.equal(anthropic.requests.length, first, 'nothing reached Anthropic');
  });
});

describe('Codex against the gateway to a cloud upstream', { skip }, () => {
  test('a task needing a tool call runs against an Azure OpenAI deployment, natively at the v1 API, billed as responses.create', async (t) => {
    const first = azure.requests.length;
    const [firstNative, firstAnthropic] = [responses.requests.length, anthropic.requests.length];
    const run = await runCodex(t, tg, config(AZURE));
    const upstream = azure.requests.slice(first);
    summarize(t, upstream);
    assertCodexDone(run);

    assert.deepEqual([responses.requests.length, anthropic.requests.length], [firstNative, firstAnthropic], 'nothing reached OpenAI or Anthropic');
    assert.ok(upstream.length >= 2, 'the tool call and the final answer');
    assert.ok(upstream.every((r) => r.method === 'POST' && r.path === '/openai/v1/responses'), upstream.map((r) => r.path).join(', '));
    const last = upstream.at(-1)!;
    assert.equal(last.body!.model, 'codex-prod', 'the deployment is the body\'s model');
    assert.equal(last.body!.stream, true);
    assert.equal(last.headers['api-key'], AZURE_SIM_KEY);
    assert.equal(last.headers.authorization, undefined, 'the gateway key does not reach Azure');
    assert.ok((last.body!.tools as Array<{ name?: string }>).some((tool) => tool.name === 'exec_command'));
    const input = last.body!.input as Array<{ type: string }>;
    assert.equal(input.at(-1)!.type, 'function_call_output', 'the command\'s output comes back');

    const rows = await tg.logRowsOf(AZURE, upstream.length);
    for (const row of rows) {
      assert.equal(row.endpoint, 'responses.create');
      assert.equal(row.provider, 'azure');
      assert.equal(row.status, 200);
      assert.equal(row.prompt_tokens, RESPONSES_USAGE.input_tokens);
      assert.equal(row.completion_tokens, RESPONSES_USAGE.output_tokens);
      assert.equal(row.unpriced, 0);
      // (21 − 5) × $0.30 + 5 × $0.03 + 13 × $2.40 per million, in nano-USD.
      assert.equal(row.cost_nanos, 16 * 300 + 5 * 30 + 13 * 2400);
    }
  });
});
