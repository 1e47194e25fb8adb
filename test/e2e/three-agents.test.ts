/**
 * Issue 41's "done when": the real Claude Code, Codex and Gemini CLI each complete a file-writing tool
 * task through one Tollgate, under one gateway user with one budget. Claude Code speaks Anthropic
 * Messages (`ANTHROPIC_BASE_URL=<gateway>/api`), Codex the Responses API (`<gateway>/api/v1`), Gemini
 * CLI Gemini's API (`GOOGLE_GEMINI_BASE_URL=<gateway>/api`), each natively to its own simulator playing
 * the scripted agent (test/helpers/sim-agent.ts); the runs are set up as in their own tests
 * (test/helpers/agent-runs.ts). Then the user's log holds each agent's rows, the budget's spend is
 * exactly the sum of those rows' costs, and what remains is the limit less that.
 *
 * The CLIs are installed by `node bin/install-test-tools.js`; without one the test skips, unless `CI`
 * is set: then it fails.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { killAll } from '../helpers/agent-cli.ts';
import {
  AGENT, assertClaudeCodeDone, assertCodexDone, assertGeminiCliDone, codexConfig, runClaudeCode, runCodex, runGeminiCli,
} from '../helpers/agent-runs.ts';
import { skipWithout, testTool } from '../helpers/test-tools.ts';
import { startTestGateway, type LogRow, type TestGateway } from '../helpers/test-gateway.ts';
import { dataDirWithPrices } from '../helpers/prices.ts';
import { eventually } from '../helpers/eventually.ts';
import { startAnthropicSimulator, type AnthropicSimulator } from '../helpers/anthropic-simulator.ts';
import { startResponsesSimulator, type ResponsesSimulator } from '../helpers/openai-responses-simulator.ts';
import { startGeminiSimulator, type GeminiSimulator } from '../helpers/gemini-simulator.ts';
import { usd } from '../../core/money/money.ts';

const CLAUDE_MODEL = 'claude-sonnet-4-6';
const CODEX_MODEL = 'openai/gpt-5-mini';
/** The models Gemini CLI 0.61 asks for (its router's, and the ones it may choose). */
const GEMINI_MODELS = ['gemini-3.5-flash-lite', 'gemini-3.8-flash', 'gemini-3.1-pro-preview'];
const BUDGET_USD = 5;

const skip = skipWithout([[testTool('claude'), 'Claude Code'], [testTool('codex'), 'Codex'], [testTool('gemini'), 'Gemini CLI']]);

let anthropic: AnthropicSimulator;
let responses: ResponsesSimulator;
let gemini: GeminiSimulator;
let tg: TestGateway;

before(async () => {
  anthropic = await startAnthropicSimulator({ agent: AGENT });
  responses = await startResponsesSimulator({ agent: AGENT });
  gemini = await startGeminiSimulator({ agent: AGENT });
  tg = await startTestGateway({
    dataDir: await dataDirWithPrices([
      { model: CLAUDE_MODEL, provider: 'anthropic', input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75 },
      { model: 'gpt-5-mini', provider: 'openai', input: 0.25, output: 2, cachedInput: 0.025 },
      ...GEMINI_MODELS.map((model) => ({ model, provider: 'gemini', input: 0.3, output: 2.5, cachedInput: 0.03 })),
    ]),
    providers: {
      anthropic: { type: 'anthropic', baseUrl: anthropic.baseUrl, apiKey: 'sk-ant-upstream' },
      openai: { type: 'openai', baseUrl: responses.baseUrl, apiKey: 'sk-openai-upstream' },
      gemini: { type: 'gemini', baseUrl: gemini.baseUrl, apiKey: 'gm-upstream-key' },
    },
    user: { budgetUsd: BUDGET_USD },
  });
});
after(async () => {
  killAll(); // a run cut short by a failed assertion or a cancel
  await tg?.close();
  await anthropic?.close();
  await responses?.close();
  await gemini?.close();
});

/** Every log row of the test's user, once there are at least `count`. */
async function userRows(count: number): Promise<LogRow[]> {
  let rows: LogRow[] = [];
  await eventually(async () => {
    rows = await tg.gateway.store.db.selectFrom('llm_requests').selectAll().where('gateway_user_id', '=', tg.userId).orderBy('id').execute();
    assert.ok(rows.length >= count, `${rows.length} of ${count} log rows`);
  }, { timeoutMs: 30_000 });
  return rows;
}

interface AccountBudget { limit_usd: number; spent_usd: number; reserved_usd: number; remaining_usd: number }

describe('Claude Code, Codex and Gemini CLI through one gateway, one user, one budget', { skip }, () => {
  test('each completes its tool task; the user\'s log has each one\'s rows and the budget is charged their sum', async (t) => {
    assertClaudeCodeDone(await runClaudeCode(tg, CLAUDE_MODEL));
    assertCodexDone(await runCodex(t, tg, codexConfig(tg, CODEX_MODEL)));
    assertGeminiCliDone(await runGeminiCli(t, tg));

    const upstreamCalls = anthropic.requests.filter((r) => r.method === 'POST').length
      + responses.requests.filter((r) => r.method === 'POST').length + gemini.chatRequests().length;
    const rows = await userRows(upstreamCalls);
    const byAgent = {
      claude: rows.filter((r) => r.endpoint === 'messages.create'),
      codex: rows.filter((r) => r.endpoint === 'responses.create'),
      gemini: rows.filter((r) => r.endpoint?.startsWith('gemini.')),
    };
    for (const [agent, agentRows] of Object.entries(byAgent)) {
      t.diagnostic(`${agent}: ${agentRows.map((r) => `${r.endpoint} ${r.model_requested} ${r.cost_nanos}`).join('; ')}`);
      assert.ok(agentRows.length >= 2, `${agent}: the tool call and the final answer are logged`);
      for (const row of agentRows) assert.equal(row.status, 200, `${agent} ${row.endpoint}`);
      assert.ok(agentRows.every((r) => Number(r.cost_nanos) > 0), `${agent}: every call billed`);
    }
    assert.ok(byAgent.claude.every((r) => r.provider === 'anthropic' && r.model_requested === CLAUDE_MODEL));
    assert.ok(byAgent.codex.every((r) => r.provider === 'openai' && r.model_requested === CODEX_MODEL));
    assert.ok(byAgent.gemini.every((r) => r.provider === 'gemini' && GEMINI_MODELS.includes(r.model_requested ?? '')));

    const totalNanos = rows.reduce((sum, r) => sum + Number(r.cost_nanos ?? 0), 0);
    assert.ok(totalNanos > 0);
    let budget: AccountBudget | undefined;
    await eventually(async () => {
      const res = await fetch(`${tg.gateway.origin}/api/account`, { headers: { authorization: `Bearer ${tg.apiKey}` } });
      budget = ((await res.json()) as { budget: AccountBudget }).budget;
      assert.equal(budget.reserved_usd, 0, 'every reservation settled');
    });
    assert.equal(budget!.limit_usd, BUDGET_USD);
    assert.equal(budget!.spent_usd, usd(totalNanos));
    assert.equal(budget!.remaining_usd, usd(BUDGET_USD * 1e9 - totalNanos));
  });
});
