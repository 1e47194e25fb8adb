/**
 * What the fuzzer runs against: the upstream simulators of test/helpers (OpenAI chat + embeddings,
 * OpenAI Responses, Anthropic Messages, and the hostile upstream) in this process, and the real
 * `tollgate serve` as a child process on a temp data dir, with a manifest whose providers point at
 * them, small body limits (so oversized bodies stay cheap) and short upstream timeouts (so a stalled
 * upstream answers 504 in about a second, not 120 s). Through the admin API it logs in and creates:
 * a "main" user with a budget and rate limits far above what the run reaches (every accounting step
 * runs), a "tight" user whose budget and rpm are spent early (402 and 429 paths), a "victim" user the
 * admin calls may edit or delete, a revoked key, and an "other" user whose stored responses the main
 * user must never reach (seeded-state.ts). A second OpenAI simulator serves the `pool` provider, a
 * pool of three keys (issue 39, item 3): one key the simulator refuses as invalid (401
 * `invalid_api_key`), and models it refuses for every key as the request's doing (`sim-forbidden`:
 * OpenAI's 403 "Project … does not have access to model …") or rate-limits (`sim-busy`: 429,
 * `retry-after: 1`). After the run, `finalChecks` asks the admin API that no good key of the pool was
 * disabled and no breaker of its normal model opened, that the pool still serves its normal model,
 * and that no upstream received the other user's items after the seeding.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGatewayProcess, type GatewayProcess } from '../../test/helpers/gateway-process.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../../test/helpers/openai-simulator.ts';
import { startAnthropicSimulator, type AnthropicSimulator } from '../../test/helpers/anthropic-simulator.ts';
import { startResponsesSimulator, type ResponsesSimulator } from '../../test/helpers/openai-responses-simulator.ts';
import { startHostileUpstream, type HostileUpstream } from '../../test/helpers/hostile-upstream.ts';
import type { RecordedRequest } from '../../test/helpers/sim-http.ts';
import { OTHER_USER_MARKER, seedResponses, type SeededState } from './seeded-state.ts';

export const ADMIN_PASSWORD = 'fuzz admin password 0123';

/** Keys, ids and the session cookie the cases use; every field is filled before the first case. */
export interface FuzzIdentities {
  mainKey: string;
  tightKey: string;
  revokedKey: string;
  /** The other user's key (used only by the seeding: the cases act as the main user). */
  otherKey: string;
  /** The stored responses and items seeded before the first case. */
  state: SeededState;
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
  /** What the world's state says after the run: each broken rule, as a sentence (empty: none). */
  finalChecks(): Promise<string[]>;
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
/** The gateway's client timeouts (manifest `server`), ms: a half-open connection is answered 408 and closed after them. */
export const HEADERS_TIMEOUT_MS = 5_000;
export const REQUEST_TIMEOUT_MS = 10_000;

/** The `pool` provider's keys: two good ones and one the simulator refuses as invalid. */
export const POOL_KEYS = { good: ['sk-fuzz-pool-good-aaa1', 'sk-fuzz-pool-good-bbb2'], bad: 'sk-fuzz-pool-bad-ccc3' } as const;

function manifestFor(openai: OpenAISimulator, responses: ResponsesSimulator, anthropic: AnthropicSimulator, hostile: HostileUpstream, pool: OpenAISimulator): unknown {
  return {
    server: { maxBodyBytes: MAX_BODY_BYTES, maxBodyBytesByDialect: { 'anthropic-messages': MAX_BODY_BYTES }, headersTimeoutMs: HEADERS_TIMEOUT_MS, requestTimeoutMs: REQUEST_TIMEOUT_MS },
    upstream: { headersTimeoutMs: UPSTREAM_HEADERS_TIMEOUT_MS, bodyTimeoutMs: UPSTREAM_HEADERS_TIMEOUT_MS, requestDeadlineMs: 3_000, maxResponseBytes: 1024 * 1024, maxStreamBytes: 4 * 1024 * 1024 },
    plugins: [
      { name: 'auth-guard', config: {} },
      { name: 'logger', config: {} },
      { name: 'metrics', config: {} },
      // A small expansion bound, so a continued big response and 1,000 references to one item both reach it.
      { name: 'response-store', config: { maxExpandedBytes: 64 * 1024 } },
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
            pool: { type: 'openai', baseUrl: pool.baseUrl, apiKeys: [...POOL_KEYS.good, POOL_KEYS.bad] },
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

async function createIdentities(origin: string): Promise<Omit<FuzzIdentities, 'state'>> {
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
  const other = await user('fuzz-other', { budget_limit_usd: 1_000 });
  const victimKey = await key(victim);
  const revoked = await key(victim);
  await call('POST', `/admin/api/keys/${revoked.id as number}/revoke`);
  return {
    mainKey: (await key(main)).key as string,
    tightKey: (await key(tight)).key as string,
    revokedKey: revoked.key as string,
    otherKey: (await key(other)).key as string,
    victimUserId: victim,
    victimKeyId: victimKey.id as number,
    sessionCookie,
  };
}

/** The last 4 characters of `key` as the gateway shows it (a fingerprint). */
const fingerprint = (key: string) => `\u2026${key.slice(-4)}`;

/**
 * The rules of issue 39, item 3, and item 7 on the world after a run (see the file's comment); each
 * broken one as a sentence. `recorded`: the simulators that keep their requests, each with how many
 * it had received when the seeding ended.
 */
async function checkWorld(origin: string, ids: FuzzIdentities, recorded: ReadonlyArray<{ name: string; requests: RecordedRequest[]; from: number }>): Promise<string[]> {
  const problems: string[] = [];
  const health = await adminCall(origin, ids.sessionCookie, 'GET', '/admin/api/upstream-health') as {
    deployments: Array<{ deployment: string; state: string }>; keys: Array<{ provider: string; key: string; state: string }>;
  };
  for (const good of POOL_KEYS.good) {
    const entry = health.keys.find((k) => k.provider === 'pool' && k.key === fingerprint(good));
    if (!entry) problems.push(`the admin API lists no pooled key ${fingerprint(good)} of provider pool`);
    else if (entry.state === 'disabled') problems.push(`the good pooled key ${fingerprint(good)} was disabled by requests (a 403 or 429 the request caused counts against no key)`);
  }
  const normal = health.deployments.find((d) => d.deployment === 'pool/gpt-4o-mini');
  if (normal?.state === 'open') problems.push('the breaker of pool/gpt-4o-mini opened (only requests to other models failed)');
  const res = await fetch(`${origin}/api/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${ids.mainKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'pool/gpt-4o-mini', messages: [{ role: 'user', content: 'Still there?' }] }),
  });
  const text = await res.text();
  if (res.status !== 200) problems.push(`after the run, pool/gpt-4o-mini answered ${res.status}: ${text.slice(0, 200)}`);
  for (const { name, requests, from } of recorded) {
    const leaked = requests.slice(from).filter((r) => r.rawBody.includes(OTHER_USER_MARKER)).length;
    if (leaked > 0) problems.push(`${leaked} request(s) to the ${name} upstream carried the other user's stored items (isolation failed open)`);
  }
  return problems;
}

/** Starts the simulators and the gateway, creates the identities and seeds the stored responses. */
export async function startFuzzWorld(): Promise<FuzzWorld> {
  const [openai, responses, anthropic, hostile, pool] = await Promise.all([
    startOpenAISimulator({ slowMs: STALL_MS, models: ['gpt-4o-mini', 'gpt-4o', 'text-embedding-3-small'] }),
    startResponsesSimulator(),
    startAnthropicSimulator(),
    startHostileUpstream(),
    startOpenAISimulator({ record: false, models: ['gpt-4o-mini'] }),
  ]);
  pool.fault({ key: POOL_KEYS.bad }, 401);
  pool.fault({ model: 'sim-forbidden' }, 403);
  pool.fault({ model: 'sim-busy' }, 429, { 'retry-after': '1' });
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-fuzz-'));
  const gateway = await startGatewayProcess({
    dataDir,
    manifest: manifestFor(openai, responses, anthropic, hostile, pool),
    env: { TOLLGATE_ADMIN_PASSWORD: ADMIN_PASSWORD },
  });
  const stopAll = async () => {
    await gateway.stop();
    await Promise.all([openai.close(), responses.close(), anthropic.close(), hostile.close(), pool.close()]);
    rmSync(dataDir, { recursive: true, force: true });
  };
  let ids: FuzzIdentities;
  try {
    const identities = await createIdentities(gateway.origin);
    ids = { ...identities, state: await seedResponses(gateway.origin, identities.mainKey, identities.otherKey) };
  } catch (err) {
    await stopAll();
    throw err;
  }
  const recorded = [
    { name: 'OpenAI Responses', requests: responses.requests }, { name: 'Anthropic', requests: anthropic.requests }, { name: 'OpenAI', requests: openai.requests },
  ].map((r) => ({ ...r, from: r.requests.length }));
  return {
    gateway,
    origin: gateway.origin,
    ids,
    alive: () => gateway.proc.exitCode === null && gateway.proc.signalCode === null,
    cpuMs: () => (gateway.proc.pid === undefined ? null : processCpuMs(gateway.proc.pid)),
    finalChecks: () => checkWorld(gateway.origin, ids, recorded),
    close: stopAll,
  };
}
