/**
 * What the fuzzer runs against: the upstream simulators of test/helpers (OpenAI chat + embeddings,
 * OpenAI Responses, Anthropic Messages, and the hostile upstream) in this process, and the real
 * `tollgate serve` as a child process on a temp data dir, with a manifest whose providers point at
 * them, small body limits (so oversized bodies stay cheap) and short upstream timeouts (so a stalled
 * upstream answers 504 in about a second, not 120 s). Through the admin API it logs in and creates:
 * a "main" user with a budget and rate limits far above what the run reaches (every accounting step
 * runs), a "tight" user whose budget and rpm are spent early (402 and 429 paths), a "victim" user the
 * admin calls may edit or delete, and a revoked key.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGatewayProcess, type GatewayProcess } from '../../test/helpers/gateway-process.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../../test/helpers/openai-simulator.ts';
import { startAnthropicSimulator, type AnthropicSimulator } from '../../test/helpers/anthropic-simulator.ts';
import { startResponsesSimulator, type ResponsesSimulator } from '../../test/helpers/openai-responses-simulator.ts';
import { startHostileUpstream, type HostileUpstream } from '../../test/helpers/hostile-upstream.ts';

export const ADMIN_PASSWORD = 'fuzz admin password 0123';

/** Keys, ids and the session cookie the cases use; every field is filled before the first case. */
export interface FuzzIdentities {
  mainKey: string;
  tightKey: string;
  revokedKey: string;
  victimUserId: number;
  victimKeyId: number;
  /** `tollgate_session=...` */
  sessionCookie: string;
}

export interface FuzzWorld {
  readonly gateway: GatewayProcess;
  readonly origin: string;
  readonly ids: FuzzIdentities;
  /** True while the gateway process has not exited. */
  alive(): boolean;
  /** CPU time the gateway process has used, ms (Linux `/proc`); null elsewhere. */
  cpuMs(): number | null;
  close(): Promise<void>;
}

/**
 * CPU time (user + system) process `pid` has used, ms, from `/proc/<pid>/stat` (fields 14 and 15,
 * in clock ticks of 1/100 s: Linux's USER_HZ); null where there is no such file.
 */
export function processCpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count fields after it.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

/** Upstream timeouts, ms: short, so stalls resolve fast; the simulator's stall outlasts them. */
export const UPSTREAM_HEADERS_TIMEOUT_MS = 1_000;
const STALL_MS = 2_500;
/** Body limit of every route, bytes (the fuzzer's oversized bodies are just above it). */
export const MAX_BODY_BYTES = 256 * 1024;

function manifestFor(openai: OpenAISimulator, responses: ResponsesSimulator, anthropic: AnthropicSimulator, hostile: HostileUpstream): unknown {
  return {
    server: { maxBodyBytes: MAX_BODY_BYTES, maxBodyBytesByDialect: { 'anthropic-messages': MAX_BODY_BYTES }, headersTimeoutMs: 5_000, requestTimeoutMs: 10_000 },
    upstream: { headersTimeoutMs: UPSTREAM_HEADERS_TIMEOUT_MS, bodyTimeoutMs: UPSTREAM_HEADERS_TIMEOUT_MS, requestDeadlineMs: 3_000, maxResponseBytes: 1024 * 1024, maxStreamBytes: 4 * 1024 * 1024 },
    plugins: [
      { name: 'auth-guard', config: {} },
      { name: 'logger', config: {} },
      { name: 'metrics', config: {} },
      { name: 'response-store', config: {} },
      { name: 'rate-limit', config: { defaultMaxConcurrent: 64 } },
      { name: 'budget', config: {} },
      { name: 'pricing', config: {} },
      { name: 'account', config: {} },
      {
        name: 'provider-router',
        config: {
          providers: {
            openai: { type: 'openai', baseUrl: openai.baseUrl, apiKey: 'sk-fuzz-openai' },
            resp: { type: 'openai-compatible', baseUrl: responses.baseUrl, apiKey: 'sk-fuzz-responses', nativeDialects: ['openai-responses'] },
            anthropic: { type: 'anthropic', baseUrl: anthropic.baseUrl, apiKey: 'sk-ant-fuzz' },
            hostile: { type: 'openai-compatible', baseUrl: hostile.baseUrl, apiKey: 'sk-fuzz-hostile', nativeDialects: ['openai-responses'] },
            'hostile-ant': { type: 'anthropic', baseUrl: hostile.baseUrl.replace(/\/v1$/, ''), apiKey: 'sk-ant-fuzz-hostile' },
          },
          models: { 'fuzz-alias': 'openai/gpt-4o-mini', 'fuzz-group': { strategy: 'fallback', deployments: [{ provider: 'openai', model: 'sim-500' }, { provider: 'openai', model: 'gpt-4o-mini' }] } },
          retry: { maxAttempts: 2 },
        },
      },
    ],
  };
}

async function adminCall(origin: string, cookie: string, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${origin}${path}`, {
    method, headers: { cookie, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

async function createIdentities(origin: string): Promise<FuzzIdentities> {
  const login = await fetch(`${origin}/admin/api/login`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD }),
  });
  if (login.status !== 200) throw new Error(`admin login failed: ${login.status} ${await login.text()}`);
  const sessionCookie = /tollgate_session=[^;]+/.exec(login.headers.get('set-cookie') ?? '')?.[0];
  if (!sessionCookie) throw new Error('admin login set no session cookie');
  const call = (method: string, path: string, body?: unknown) => adminCall(origin, sessionCookie, method, path, body);
  const user = async (name: string, fields: Record<string, unknown>) => (await call('POST', '/admin/api/users', { name, ...fields })).id as number;
  const key = async (userId: number) => call('POST', `/admin/api/users/${userId}/keys`, { name: 'fuzz' });
  const main = await user('fuzz-main', { budget_limit_usd: 1_000_000, budget_period: 'monthly', rpm: 100_000_000, tpm: 1_000_000_000, max_concurrent: 64 });
  const tight = await user('fuzz-tight', { budget_limit_usd: 0.0005, budget_period: 'daily', rpm: 20, tpm: 5_000, max_concurrent: 2 });
  const victim = await user('fuzz-victim', { budget_limit_usd: 5 });
  const victimKey = await key(victim);
  const revoked = await key(victim);
  await call('POST', `/admin/api/keys/${revoked.id as number}/revoke`);
  return {
    mainKey: (await key(main)).key as string,
    tightKey: (await key(tight)).key as string,
    revokedKey: revoked.key as string,
    victimUserId: victim,
    victimKeyId: victimKey.id as number,
    sessionCookie,
  };
}

/** Starts the simulators and the gateway and creates the identities. */
export async function startFuzzWorld(): Promise<FuzzWorld> {
  const [openai, responses, anthropic, hostile] = await Promise.all([
    startOpenAISimulator({ slowMs: STALL_MS, models: ['gpt-4o-mini', 'gpt-4o', 'text-embedding-3-small'] }),
    startResponsesSimulator(),
    startAnthropicSimulator(),
    startHostileUpstream(),
  ]);
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-fuzz-'));
  const gateway = await startGatewayProcess({
    dataDir,
    manifest: manifestFor(openai, responses, anthropic, hostile),
    env: { TOLLGATE_ADMIN_PASSWORD: ADMIN_PASSWORD },
  });
  const ids = await createIdentities(gateway.origin);
  return {
    gateway,
    origin: gateway.origin,
    ids,
    alive: () => gateway.proc.exitCode === null && gateway.proc.signalCode === null,
    cpuMs: () => (gateway.proc.pid === undefined ? null : processCpuMs(gateway.proc.pid)),
    async close() {
      await gateway.stop();
      await Promise.all([openai.close(), responses.close(), anthropic.close(), hostile.close()]);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
