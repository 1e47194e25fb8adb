/**
 * The real Claude Code CLI against the gateway's Messages endpoint, run as a user would:
 * `claude -p <task> --output-format json` with `ANTHROPIC_BASE_URL=<gateway>/api` and a gateway key,
 * a throwaway HOME and working directory, no stdin, nothing but 127.0.0.1 to talk to. The simulators
 * play a scripted agent (test/helpers/sim-agent.ts): the first answer calls Claude Code's `Write`
 * tool, the next one (after the tool's result) is the final text. Three times: natively passed
 * through to an Anthropic simulator, translated to an OpenAI-format one by a manifest model name,
 * natively to Claude on a simulated AWS Bedrock (`bedrock/<model id>`: SigV4-signed, the answer in
 * AWS's binary event stream), and natively to Claude on a simulated Google Vertex AI
 * (`vertex/<model>@<version>`: `:streamRawPredict` with an OAuth token of a service-account key).
 *
 * The CLI is installed by `node bin/install-test-tools.js` (pinned, outside node_modules; .ci/run
 * does it). Without it the tests skip, unless `CI` is set: then they fail.
 * `--allowedTools Write,Bash` lets the tool run without a prompt (in `-p` mode an unapproved call is
 * denied, listed in `permission_denials`); `--permission-mode bypassPermissions` is refused as root.
 */
import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { killAll } from '../helpers/agent-cli.ts';
import { skipWithout, testTool } from '../helpers/test-tools.ts';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { dataDirWithPrices } from '../helpers/prices.ts';
import { SIM_USAGE, startAnthropicSimulator, type AnthropicSimulator } from '../helpers/anthropic-simulator.ts';
import { SIM_USAGE as OPENAI_USAGE, startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { BEDROCK_SIM_KEYS, startBedrockSimulator, type BedrockSimulator } from '../helpers/bedrock-simulator.ts';
import { startVertexSimulator, VERTEX_SIM_LOCATION, VERTEX_SIM_PROJECT, type VertexSimulator } from '../helpers/vertex-simulator.ts';
import type { RecordedRequest } from '../helpers/sim-http.ts';
import { AGENT, assertClaudeCodeDone, runClaudeCode } from '../helpers/agent-runs.ts';

const NATIVE = 'claude-sonnet-4-5';
/** Mapped to `openai/gpt-4o-mini` by the manifest. */
const TRANSLATED = 'claude-haiku-4-5';
/** Claude on Bedrock, by an inference profile id. */
const BEDROCK = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
/** Claude on Vertex AI, by its versioned id (another model than NATIVE's, so its own price row is seen to apply). */
const VERTEX = 'claude-opus-4-1@20250805';

const claude = testTool('claude');
const skip = skipWithout([[claude, 'Claude Code']]);

let anthropic: AnthropicSimulator;
let openai: OpenAISimulator;
let bedrock: BedrockSimulator;
let vertex: VertexSimulator;
let tg: TestGateway;
/** What reached the gateway: method and URL (with its query). */
const received: Array<{ method: string; url: string }> = [];

before(async () => {
  anthropic = await startAnthropicSimulator({ agent: AGENT });
  openai = await startOpenAISimulator({ agent: AGENT });
  bedrock = await startBedrockSimulator({ agent: AGENT });
  vertex = await startVertexSimulator({ agent: AGENT });
  const dataDir = await dataDirWithPrices([
    { model: NATIVE, provider: 'anthropic', input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75 },
    { model: 'gpt-4o-mini', provider: 'openai', input: 0.15, output: 0.6, cachedInput: 0.075 },
    // A geographic inference profile is priced as the in-region (`regional.`) row (docs/providers.md).
    { model: `regional.${BEDROCK.slice('us.'.length)}`, provider: 'bedrock', input: 3.3, output: 16.5, cachedInput: 0.33, cacheWrite: 4.125 },
    // Vertex AI's rows name the model without its `@version`.
    { model: 'claude-opus-4-1', provider: 'vertex', input: 15, output: 75, cachedInput: 1.5, cacheWrite: 18.75 },
  ]);
  tg = await startTestGateway({
    dataDir,
    providers: {
      anthropic: { type: 'anthropic', baseUrl: anthropic.baseUrl, apiKey: 'sk-ant-upstream' },
      openai: { type: 'openai', baseUrl: openai.baseUrl, apiKey: 'sk-openai-upstream' },
      bedrock: { type: 'bedrock', baseUrl: bedrock.endpoint, region: 'us-east-1', ...BEDROCK_SIM_KEYS },
      vertex: {
        type: 'vertex', baseUrl: vertex.endpoint, project: VERTEX_SIM_PROJECT, location: VERTEX_SIM_LOCATION,
        credentialsJson: vertex.serviceAccountKey('claude-code@sim-project.iam.gserviceaccount.com'),
      },
    },
    router: { models: { [TRANSLATED]: 'openai/gpt-4o-mini' } },
  });
  tg.gateway.server.server.on('request', (req) => {
    received.push({ method: req.method!, url: req.url! });
  });
});
after(async () => {
  killAll(); // a run cut short by a failed assertion or a cancel
  await tg?.close();
  await anthropic?.close();
  await openai?.close();
  await bedrock?.close();
  await vertex?.close();
});

/** The log rows of a native cloud run: messages.create, by `provider`, priced (`costNanos` each), Claude Code's tokens. */
async function assertCloudRows(model: string, provider: string, calls: number, costNanos: number): Promise<void> {
  const rows = (await tg.logRowsOf(model, calls)).filter((row) => row.endpoint !== 'messages.count_tokens');
  assert.ok(rows.length >= calls, `${rows.length} rows for ${calls} calls`);
  for (const row of rows) {
    assert.equal(row.endpoint, 'messages.create');
    assert.equal(row.provider, provider);
    assert.equal(row.status, 200);
    assert.equal(row.completion_tokens, SIM_USAGE.output_tokens);
    assert.equal(row.unpriced, 0);
    assert.equal(row.cost_nanos, costNanos);
  }
}

/** One diagnostic line per upstream request: path, model, max_tokens, stream, tools, beta. */
function summarize(t: TestContext, requests: RecordedRequest[]): void {
  for (const r of requests) {
    const b = r.body ?? {};
    const tools = (b.tools as unknown[] | undefined)?.length ?? 0;
    t.diagnostic(`${r.method} ${r.path} model=${String(b.model)} max_tokens=${String(b.max_tokens)} stream=${String(b.stream)} tools=${tools} beta=${String(r.headers['anthropic-beta'] ?? '')}`);
  }
}

describe('Claude Code against the gateway', { skip }, () => {
  test('a task needing a tool call runs against a native Anthropic upstream, billed as messages.create', async (t) => {
    const first = anthropic.requests.length;
    const firstReceived = received.length;
    const run = await runClaudeCode(tg, NATIVE);
    const upstream = anthropic.requests.slice(first).filter((r) => r.method === 'POST');
    summarize(t, upstream);
    assertClaudeCodeDone(run);

    const calls = received.slice(firstReceived);
    assert.ok(calls.length >= 2, 'the tool call and the final answer');
    assert.ok(calls.every((c) => c.method === 'POST' && c.url.startsWith('/api/v1/messages')), JSON.stringify(calls));
    assert.ok(calls.some((c) => c.url === '/api/v1/messages?beta=true'), 'Claude Code uses the beta path');
    const messages = upstream.filter((r) => r.path === '/v1/messages');
    const last = messages.at(-1)!.body!;
    assert.equal(last.model, NATIVE);
    assert.equal(last.stream, true, 'Claude Code streams');
    assert.ok((last.tools as Array<{ name: string }>).some((tool) => tool.name === 'Write'));
    assert.match(String(messages.at(-1)!.headers['anthropic-beta']), /claude-code-20250219/, 'the beta header reaches Anthropic');
    assert.equal(messages.at(-1)!.headers['x-api-key'], 'sk-ant-upstream');

    // Token counts Claude Code may send are logged too (cost 0, endpoint messages.count_tokens): not these rows.
    const rows = (await tg.logRowsOf(NATIVE, messages.length)).filter((row) => row.endpoint !== 'messages.count_tokens');
    for (const row of rows) {
      assert.equal(row.endpoint, 'messages.create');
      assert.equal(row.provider, 'anthropic');
      assert.equal(row.status, 200);
      assert.equal(row.stream, 1);
      assert.equal(row.completion_tokens, SIM_USAGE.output_tokens);
      assert.equal(row.usage_estimated, 0);
      // 12 × $3 + 5 × $0.30 + 3 × $3.75 + 9 × $15, per million, in nano-USD.
      assert.equal(row.cost_nanos, 12 * 3000 + 5 * 300 + 3 * 3750 + 9 * 15000);
    }
  });

  test('the same task runs on an OpenAI-format upstream through translation, billed as messages.create', async (t) => {
    const first = openai.requests.length;
    const firstAnthropic = anthropic.requests.length;
    const run = await runClaudeCode(tg, TRANSLATED);
    const upstream = openai.requests.slice(first).filter((r) => r.method === 'POST');
    summarize(t, upstream);
    assertClaudeCodeDone(run);

    assert.equal(anthropic.requests.length, firstAnthropic, 'nothing reached Anthropic');
    assert.ok(upstream.length >= 2, 'the tool call and the final answer');
    const last = upstream.at(-1)!.body!;
    assert.equal(last.model, 'gpt-4o-mini');
    assert.equal(last.stream, true);
    assert.ok((last.tools as Array<{ function: { name: string } }>).some((tool) => tool.function.name === 'Write'));
    const turns = last.messages as Array<{ role: string; tool_call_id?: string }>;
    assert.equal(turns.at(-1)!.role, 'tool', 'the tool result comes back as a tool message');

    const rows = (await tg.logRowsOf(TRANSLATED, upstream.length)).filter((row) => row.endpoint !== 'messages.count_tokens');
    for (const row of rows) {
      assert.equal(row.endpoint, 'messages.create');
      assert.equal(row.provider, 'openai');
      assert.equal(row.status, 200);
      assert.equal(row.prompt_tokens, OPENAI_USAGE.prompt_tokens);
      assert.equal(row.completion_tokens, OPENAI_USAGE.completion_tokens);
      // 16 × $0.15 + 3 cached × $0.075 + 24 × $0.60, per million, in nano-USD.
      assert.equal(row.cost_nanos, 16 * 150 + 3 * 75 + 24 * 600);
    }
  });
});

describe('Claude Code against the gateway to a cloud upstream', { skip }, () => {
  test('a task needing a tool call runs against Claude on Bedrock, signed and decoded from AWS\'s event stream, billed as messages.create', async (t) => {
    const model = `bedrock/${BEDROCK}`;
    const first = bedrock.requests.length;
    const [firstAnthropic, firstOpenAI] = [anthropic.requests.length, openai.requests.length];
    const failures = bedrock.signatureFailures;
    const run = await runClaudeCode(tg, model);
    const upstream = bedrock.requests.slice(first).filter((r) => r.method === 'POST');
    summarize(t, upstream);
    assertClaudeCodeDone(run);

    assert.deepEqual([anthropic.requests.length, openai.requests.length], [firstAnthropic, firstOpenAI], 'nothing reached Anthropic or OpenAI');
    assert.equal(bedrock.signatureFailures, failures, 'every call was signed with the known secret');
    const streamed = upstream.filter((r) => r.path === `/model/${encodeURIComponent(BEDROCK)}/invoke-with-response-stream`);
    assert.ok(streamed.length >= 2, `the tool call and the final answer: ${upstream.map((r) => r.path).join(', ')}`);
    const last = streamed.at(-1)!.body!;
    assert.equal(last.model, undefined, 'the path names the model');
    assert.equal(last.stream, undefined, 'the path says it streams');
    assert.equal(last.anthropic_version, 'bedrock-2023-05-31');
    assert.ok((last.anthropic_beta as string[]).includes('claude-code-20250219'), 'the beta header goes in the body');
    assert.ok((last.tools as Array<{ name: string }>).some((tool) => tool.name === 'Write'));
    const turns = last.messages as Array<{ role: string; content: Array<{ type: string }> }>;
    assert.ok(turns.at(-1)!.content.some((block) => block.type === 'tool_result'), 'the Write tool\'s result comes back');

    // 12 × $3.30 + 5 × $0.33 + 3 × $4.125 + 9 × $16.50, per million, in nano-USD.
    await assertCloudRows(model, 'bedrock', streamed.length, 12 * 3300 + 5 * 330 + 3 * 4125 + 9 * 16500);
  });

  test('a task needing a tool call runs against Claude on Vertex AI, through :streamRawPredict with an OAuth token, billed as messages.create', async (t) => {
    const model = `vertex/${VERTEX}`;
    const first = vertex.requests.length;
    const [firstAnthropic, firstOpenAI, firstBedrock] = [anthropic.requests.length, openai.requests.length, bedrock.requests.length];
    const run = await runClaudeCode(tg, model);
    const upstream = vertex.requests.slice(first).filter((r) => r.method === 'POST');
    summarize(t, upstream);
    assertClaudeCodeDone(run);

    assert.deepEqual([anthropic.requests.length, openai.requests.length, bedrock.requests.length], [firstAnthropic, firstOpenAI, firstBedrock], 'nothing reached the other upstreams');
    const path = `/v1/projects/${VERTEX_SIM_PROJECT}/locations/${VERTEX_SIM_LOCATION}/publishers/anthropic/models/${VERTEX}:streamRawPredict`;
    const streamed = upstream.filter((r) => r.path === path);
    assert.ok(streamed.length >= 2, `the tool call and the final answer: ${upstream.map((r) => r.path).join(', ')}`);
    const last = streamed.at(-1)!;
    assert.equal(last.body!.model, undefined, 'the path names the model');
    assert.equal(last.body!.stream, true);
    assert.equal(last.body!.anthropic_version, 'vertex-2023-10-16');
    assert.match(String(last.headers['anthropic-beta']), /claude-code-20250219/, 'the beta header reaches Vertex');
    assert.match(String(last.headers.authorization), /^Bearer ya29\.sim-\d+$/);
    assert.ok((last.body!.tools as Array<{ name: string }>).some((tool) => tool.name === 'Write'));
    const turns = last.body!.messages as Array<{ role: string; content: Array<{ type: string }> }>;
    assert.ok(turns.at(-1)!.content.some((block) => block.type === 'tool_result'), 'the Write tool\'s result comes back');

    // 12 × $15 + 5 × $1.50 + 3 × $18.75 + 9 × $75, per million, in nano-USD.
    await assertCloudRows(model, 'vertex', streamed.length, 12 * 15000 + 5 * 1500 + 3 * 18750 + 9 * 75000);
  });
});
