/**
 * The real opencode CLI against the gateway, run as a user would: `opencode run <task>` with an
 * `opencode.json` in a throwaway `XDG_CONFIG_HOME` that declares the gateway as a custom provider
 * (`npm: "@ai-sdk/anthropic"`, `options.baseURL: <gateway>/api`, to which it appends `/messages`, the
 * key from `TOLLGATE_API_KEY`), a throwaway HOME and working directory, no stdin, nothing but 127.0.0.1
 * to talk to. The simulator plays a scripted agent (test/helpers/sim-agent.ts): the first answer calls
 * opencode's `write` tool, the next one (after its result) is the final text. Natively passed through
 * to an Anthropic simulator.
 *
 * The CLI is installed by `node bin/install-test-tools.js` (pinned, outside node_modules; .ci/run
 * does it). Without it the tests skip, unless `CI` is set: then they fail. What keeps it off the
 * network is in `test/helpers/agent-runs.ts` (`runOpencode`).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { killAll } from '../helpers/agent-cli.ts';
import { skipWithout, testTool } from '../helpers/test-tools.ts';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { dataDirWithPrices } from '../helpers/prices.ts';
import { startAnthropicSimulator, type AnthropicSimulator } from '../helpers/anthropic-simulator.ts';
import { AGENT, assertOpencodeDone, runOpencode } from '../helpers/agent-runs.ts';

const MODEL = 'claude-sonnet-4-6';
const opencode = testTool('opencode');
const skip = skipWithout([[opencode, 'opencode']]);

let anthropic: AnthropicSimulator;
let tg: TestGateway;
/** What reached the gateway: method and URL. */
const received: Array<{ method: string; url: string }> = [];

before(async () => {
  anthropic = await startAnthropicSimulator({ agent: AGENT });
  tg = await startTestGateway({
    dataDir: await dataDirWithPrices([{ model: MODEL, provider: 'anthropic', input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75 }]),
    providers: { anthropic: { type: 'anthropic', baseUrl: anthropic.baseUrl, apiKey: 'sk-ant-upstream' } },
  });
  tg.gateway.server.server.on('request', (req) => {
    received.push({ method: req.method!, url: req.url! });
  });
});
after(async () => {
  killAll(); // a run cut short by a failed assertion or a cancel
  await tg?.close();
  await anthropic?.close();
});

describe('opencode against the gateway', { skip }, () => {
  test('a task needing its write tool runs through POST /api/messages to a native Anthropic upstream, logged and billed', async (t) => {
    const first = anthropic.requests.length;
    const run = await runOpencode(t, tg, MODEL);
    const upstream = anthropic.requests.slice(first).filter((r) => r.method === 'POST');
    for (const r of upstream) t.diagnostic(`${r.path} model=${String(r.body?.model)} tools=${((r.body?.tools ?? []) as unknown[]).length}`);
    assertOpencodeDone(run);

    const calls = received.filter((c) => c.url.startsWith('/api/'));
    assert.ok(calls.length >= 2, 'the tool call and the final answer');
    assert.ok(calls.every((c) => c.method === 'POST' && c.url === '/api/messages'), JSON.stringify(calls));
    const turns = upstream.filter((r) => ((r.body?.tools ?? []) as Array<{ name: string }>).some((tool) => tool.name === 'write'));
    assert.ok(turns.length >= 2, 'opencode offered its write tool on both turns');
    assert.equal(turns.at(-1)!.body!.model, MODEL);

    const rows = await tg.logRowsOf(MODEL, upstream.length);
    for (const row of rows) {
      assert.deepEqual([row.endpoint, row.provider, row.status, row.gateway_user_id], ['messages.create', 'anthropic', 200, tg.userId]);
      assert.ok(Number(row.cost_nanos) > 0, 'billed');
    }
  });
});
