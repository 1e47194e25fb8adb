/**
 * Running each real agent CLI against a test gateway as a user would, with the environment or config
 * docs/agents.md gives, a throwaway HOME and working directory, and nothing that talks to other hosts:
 * Claude Code (`ANTHROPIC_BASE_URL=<gateway>/api`), Codex (a `config.toml` provider at `<gateway>/api/v1`),
 * Gemini CLI (`GOOGLE_GEMINI_BASE_URL=<gateway>/api`) and opencode (an `opencode.json` custom provider
 * at `<gateway>/api`). Each asks the simulators' scripted agent (sim-agent.ts) for the same task, `TASK`,
 * whose tool call writes `AGENT.file`. Used by the agents' own tests and by three-agents.test.ts.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { runAgentCli, type AgentRun } from './agent-cli.ts';
import { missingMessage, testTool } from './test-tools.ts';
import type { TestGateway } from './test-gateway.ts';
import { tempDir } from './tmp.ts';
import type { SimAgent } from './sim-agent.ts';

export const AGENT: SimAgent = { file: 'hello.txt', content: 'hello from tollgate', answer: 'I created hello.txt.' };
export const TASK = 'Create a file hello.txt containing exactly: hello from tollgate';
export const AGENT_TIMEOUT_MS = 90_000;
const PATH = process.env.PATH ?? '/usr/bin:/bin';

/** A fresh root with the named sub-folders made. */
function dirs<N extends string>(prefix: string, names: readonly N[]): Record<N, string> {
  const root = tempDir(prefix);
  const out = Object.fromEntries(names.map((name) => [name, join(root, name)])) as Record<N, string>;
  for (const dir of Object.values<string>(out)) mkdirSync(dir, { recursive: true });
  return out;
}

/** The file the task asked for, as the agent left it. */
function assertFileWritten(run: AgentRun): void {
  assert.equal(readFileSync(join(run.cwd, AGENT.file), 'utf8'), AGENT.content);
}

const exitDetail = (name: string, run: AgentRun) => `${name} exited ${run.code ?? run.signal}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`;

/** `claude -p TASK --output-format json --model <model>` with `ANTHROPIC_BASE_URL=<gateway>/api`. */
export function runClaudeCode(gateway: TestGateway, model: string): Promise<AgentRun> {
  const claude = testTool('claude');
  assert.ok(claude, missingMessage('Claude Code'));
  const { cwd, home } = dirs('tollgate-claude-', ['cwd', 'home']);
  const env = {
    PATH, HOME: home, LANG: 'C.UTF-8',
    ANTHROPIC_BASE_URL: `${gateway.gateway.origin}/api`, ANTHROPIC_API_KEY: gateway.apiKey,
    DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_TELEMETRY: '1', DISABLE_ERROR_REPORTING: '1',
  };
  // `--allowedTools`: in `-p` mode an unapproved call is denied; `bypassPermissions` is refused as root.
  return runAgentCli(claude.bin, ['-p', TASK, '--output-format', 'json', '--model', model, '--allowedTools', 'Write,Bash'], cwd, env, AGENT_TIMEOUT_MS);
}

/** Claude Code's run as a user sees it: exit 0, `is_error: false`, the final text, the file. */
export function assertClaudeCodeDone(run: AgentRun): void {
  assert.equal(run.code, 0, exitDetail('claude', run));
  const result = JSON.parse(run.stdout) as { is_error: boolean; result: string; subtype: string; permission_denials: unknown[] };
  assert.equal(result.is_error, false, run.stdout);
  assert.equal(result.subtype, 'success');
  assert.equal(result.result, AGENT.answer);
  assert.deepEqual(result.permission_denials, []);
  assertFileWritten(run);
}

/** Codex's config.toml: the gateway as the model provider (Responses API), nothing that talks to other hosts. */
export function codexConfig(gateway: TestGateway, model: string, extra: { topLevel?: string[]; provider?: string[]; features?: string[] } = {}): string {
  return [
    'model_provider = "tollgate"', `model = "${model}"`, ...(extra.topLevel ?? []), '',
    '[model_providers.tollgate]', 'name = "Tollgate"', `base_url = "${gateway.gateway.origin}/api/v1"`, 'wire_api = "responses"',
    'env_key = "TOLLGATE_API_KEY"', 'request_max_retries = 0', 'stream_max_retries = 0', ...(extra.provider ?? []), '',
    // Else Codex looks up ab.chatgpt.com, and the plugin marketplace on github.com and chatgpt.com.
    '[analytics]', 'enabled = false', '',
    '[features]', 'plugins = false', ...(extra.features ?? []), '',
  ].join('\n');
}

let codexSandbox: string[] | null = null;

/** How Codex runs commands here: in its own sandbox (bubblewrap) when `codex sandbox -- true` works, else unsandboxed. */
function codexSandboxArgs(bin: string): string[] {
  if (codexSandbox) return codexSandbox;
  const probe = dirs('tollgate-codex-probe-', ['cwd', 'home', 'codexHome']);
  const status = spawnSync(bin, ['sandbox', '--', 'true'], { cwd: probe.cwd, env: { PATH, HOME: probe.home, CODEX_HOME: probe.codexHome }, stdio: 'ignore', timeout: 30_000 }).status;
  return (codexSandbox = status === 0 ? ['--sandbox', 'workspace-write'] : ['--dangerously-bypass-approvals-and-sandbox']);
}

/** `codex exec --skip-git-repo-check TASK` with `configToml` in a fresh CODEX_HOME. */
export function runCodex(t: TestContext, gateway: TestGateway, configToml: string): Promise<AgentRun> {
  const codex = testTool('codex');
  assert.ok(codex, missingMessage('Codex'));
  const { cwd, home, codexHome } = dirs('tollgate-codex-', ['cwd', 'home', 'codexHome']);
  writeFileSync(join(codexHome, 'config.toml'), configToml);
  const env = { PATH, HOME: home, CODEX_HOME: codexHome, TOLLGATE_API_KEY: gateway.apiKey };
  const args = ['exec', '--skip-git-repo-check', '--ephemeral', '--color', 'never', ...codexSandboxArgs(codex.bin), TASK];
  t.diagnostic(`codex ${args.slice(0, -1).join(' ')} <task>`);
  return runAgentCli(codex.bin, args, cwd, env, AGENT_TIMEOUT_MS);
}

/** Codex's run as a user sees it: exit 0, the final text on stdout, the file. */
export function assertCodexDone(run: AgentRun): void {
  assert.equal(run.code, 0, exitDetail('codex', run));
  assert.equal(run.stdout.trim(), AGENT.answer, run.stderr);
  assertFileWritten(run);
}

/** What Gemini CLI needs in `~/.gemini/settings.json`: the API-key auth type, and nothing that talks to Google. */
export const GEMINI_SETTINGS = {
  security: { auth: { selectedType: 'gemini-api-key' } },
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
};

/**
 * `gemini -p TASK --yolo --output-format json` with `GEMINI_API_KEY=<gateway key>`,
 * `GOOGLE_GEMINI_BASE_URL=<gateway>/api` and `GEMINI_CLI_TRUST_WORKSPACE=true` (headless mode refuses
 * an untrusted folder); `--yolo` runs tool calls without asking.
 */
export function runGeminiCli(t: TestContext, gateway: TestGateway): Promise<AgentRun> {
  const gemini = testTool('gemini');
  assert.ok(gemini, missingMessage('Gemini CLI'));
  const { cwd, home } = dirs('tollgate-gemini-cli-', ['cwd', 'home']);
  mkdirSync(join(home, '.gemini'));
  writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify(GEMINI_SETTINGS, null, 2));
  const env = {
    PATH, HOME: home,
    GEMINI_API_KEY: gateway.apiKey, GOOGLE_GEMINI_BASE_URL: `${gateway.gateway.origin}/api`, GEMINI_CLI_TRUST_WORKSPACE: 'true',
  };
  const args = ['-p', TASK, '--yolo', '--output-format', 'json'];
  t.diagnostic(`gemini ${args.slice(2).join(' ')}`);
  return runAgentCli(gemini.bin, args, cwd, env, AGENT_TIMEOUT_MS);
}

/** Gemini CLI's run as a user sees it: exit 0, the final text in the JSON output, the file. */
export function assertGeminiCliDone(run: AgentRun): void {
  assert.equal(run.code, 0, exitDetail('gemini', run));
  const output = JSON.parse(run.stdout) as { response?: string };
  assert.equal(output.response?.trim(), AGENT.answer, run.stdout);
  assertFileWritten(run);
}

/**
 * opencode's config (`$XDG_CONFIG_HOME/opencode/opencode.json`): the gateway as a custom provider
 * `tollgate` built on `@ai-sdk/anthropic` (bundled in opencode; it appends `/messages` to
 * `<gateway>/api`), offering `model`; file edits and commands allowed without asking; no sharing,
 * no auto-update.
 */
export function opencodeConfig(gateway: TestGateway, model: string): Record<string, unknown> {
  return {
    $schema: 'https://opencode.ai/config.json',
    provider: {
      tollgate: {
        npm: '@ai-sdk/anthropic',
        name: 'Tollgate',
        options: { baseURL: `${gateway.gateway.origin}/api`, apiKey: '{env:TOLLGATE_API_KEY}' },
        models: { [model]: { name: model } },
      },
    },
    model: `tollgate/${model}`,
    small_model: `tollgate/${model}`,
    permission: { edit: 'allow', bash: 'allow' },
    share: 'disabled',
    autoupdate: false,
  };
}

/**
 * `opencode run TASK --model tollgate/<model>` with `opencodeConfig` in a fresh XDG_CONFIG_HOME; the
 * environment turns off what would reach other hosts (the models.dev catalog, updates, LSP downloads,
 * the default plugins).
 */
export function runOpencode(t: TestContext, gateway: TestGateway, model: string): Promise<AgentRun> {
  const opencode = testTool('opencode');
  assert.ok(opencode, missingMessage('opencode'));
  const d = dirs('tollgate-opencode-', ['cwd', 'home', 'config/opencode', 'data', 'cache', 'state']);
  writeFileSync(join(d['config/opencode'], 'opencode.json'), JSON.stringify(opencodeConfig(gateway, model), null, 2));
  const env = {
    PATH, HOME: d.home, LANG: 'C.UTF-8',
    XDG_CONFIG_HOME: join(d['config/opencode'], '..'), XDG_DATA_HOME: d.data, XDG_CACHE_HOME: d.cache, XDG_STATE_HOME: d.state,
    TOLLGATE_API_KEY: gateway.apiKey,
    OPENCODE_DISABLE_AUTOUPDATE: '1', OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    OPENCODE_DISABLE_DEFAULT_PLUGINS: '1', OPENCODE_DISABLE_SHARE: '1', OPENCODE_DISABLE_CLAUDE_CODE: '1',
  };
  const args = ['run', TASK, '--model', `tollgate/${model}`];
  t.diagnostic(`opencode ${args.slice(2).join(' ')}`);
  return runAgentCli(opencode.bin, args, d.cwd, env, AGENT_TIMEOUT_MS);
}

/** opencode's run as a user sees it: exit 0, the final text on stdout, the file. */
export function assertOpencodeDone(run: AgentRun): void {
  assert.equal(run.code, 0, exitDetail('opencode', run));
  assert.ok(run.stdout.includes(AGENT.answer), exitDetail('opencode', run));
  assertFileWritten(run);
}
