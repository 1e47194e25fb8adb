/** Manifest validation as accept/reject tables, asserting the exact problems reported. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ManifestError, loadManifestFile, validateManifest, type Manifest } from '../../core/manifest.ts';
import { defaultManifest } from '../../core/default-manifest.ts';
import { pluginRegistry } from '../../plugins/index.ts';
import { tempDir } from '../helpers/tmp.ts';
import { failModesOf } from '../../core/coordination/index.ts';

const env = { OPENAI_API_KEY: 'sk-env', PORT_FROM_ENV: '9000' };
const router = (providers: unknown = { openai: { type: 'openai', baseUrl: 'https://api.openai.com/v1' } }) => ({ name: 'provider-router', config: { providers } });
const routerWithModels = (models: unknown) => ({ name: 'provider-router', config: { ...router().config, models } });

function problems(input: unknown): string[] {
  try {
    validateManifest(input, pluginRegistry, { env });
  } catch (err) {
    assert.ok(err instanceof ManifestError);
    return err.issues.map((i) => `${i.pointer}: ${i.message}`);
  }
  return [];
}

describe('manifest validation', () => {
  const rejected: Array<[string, unknown, string[]]> = [
    ['no plugins', {}, ['/plugins: is required']],
    ['an empty plugin list', { plugins: [] }, ['/plugins: must NOT have fewer than 1 items']],
    ['an unknown top-level field', { plugins: [router()], extra: 1 }, ['/extra: unknown field']],
    ['an unknown plugin', { plugins: [{ name: 'auth-gaurd' }, router()] }, ['/plugins/0/name: unknown plugin "auth-gaurd"; known plugins: auth-guard, logger, metrics, response-store, rate-limit, guardrails, cache, budget, pricing, account, provider-router']],
    ['a plugin listed twice', { plugins: [{ name: 'logger' }, { name: 'logger' }, router()] }, ['/plugins/1/name: plugin "logger" is listed twice']],
    ['the router not last', { plugins: [router(), { name: 'logger' }] }, ['/plugins/0: the routing plugin must be the last one (it is terminal)']],
    ['no router', { plugins: [{ name: 'logger' }] }, ['/plugins: one routing plugin (provider-router) must be listed, last']],
    [
      'every bad field at once, with pointers',
      { server: { port: 70000, logLevel: 'loud' }, plugins: [{ name: 'logger', config: { batchSize: 0, flushEvery: 5 } }, router({ openai: { type: 'openai', baseUrl: 'ftp://x' } })] },
      [
        '/server/port: must be <= 65535',
        '/server/logLevel: must be one of "debug", "info", "warn", "error"',
        '/plugins/0/config/flushEvery: unknown field',
        '/plugins/0/config/batchSize: must be >= 1',
        '/plugins/1/config/providers/openai/baseUrl: must match pattern "^https?://"',
      ],
    ],
    ['an unknown provider type', { plugins: [router({ acme: { type: 'acme', baseUrl: 'https://acme.test' } })] }, ['/plugins/0/config/providers/acme/type: must be one of "openai", "anthropic", "gemini", "mistral", "ollama", "azure", "bedrock", "vertex", "openai-compatible"']],
    [
      'a Vertex AI provider without its project and location, with a malformed location, or listing a model id that is no Vertex id',
      {
        plugins: [router({
          v: { type: 'vertex' }, w: { type: 'vertex', project: 'my-project', location: 'https://x' },
          x: { type: 'vertex', project: 'my-project', location: 'us-east5', models: ['gemini-2.5-flash', '../claude'] },
        })],
      },
      [
        '/plugins/0/config/providers/v/project: is required', '/plugins/0/config/providers/v/location: is required', '/plugins/0/config/providers/w/location: must match pattern "^(global|[a-z]+-[a-z]+\\d+)$"',
        '/plugins/0/config/providers/x/models/1: must match pattern "^[A-Za-z0-9._-]+(@[A-Za-z0-9._-]+)?$"',
      ],
    ],
    [
      'an Azure entra with a secret but no tenant, an http authority, an unknown field, or a managed identity beside a secret',
      {
        plugins: [router({
          a: { type: 'azure', baseUrl: 'https://r.openai.azure.com', entra: { clientId: 'c', clientSecret: 's' } },
          b: { type: 'azure', baseUrl: 'https://r.openai.azure.com', entra: { authorityHost: 'http://login.test', tenant: 't' } },
          c: { type: 'azure', baseUrl: 'https://r.openai.azure.com', entra: { managedIdentity: true, tenantId: 't', clientId: 'c', clientSecret: 's', authorityHost: 'https://login.test' } },
          d: { type: 'azure', baseUrl: 'https://r.openai.azure.com', entra: { managedIdentity: 'yes' } },
        })],
      },
      [
        '/plugins/0/config/providers/a/entra: must have properties tenantId, clientId when property clientSecret is present',
        '/plugins/0/config/providers/b/entra/tenant: unknown field',
        '/plugins/0/config/providers/b/entra/authorityHost: must match pattern "^https://"',
        '/plugins/0/config/providers/c/entra/tenantId: must not be set with the other fields given',
        '/plugins/0/config/providers/c/entra/clientSecret: must not be set with the other fields given',
        '/plugins/0/config/providers/c/entra/authorityHost: must not be set with the other fields given',
        '/plugins/0/config/providers/d/entra/managedIdentity: must be boolean',
      ],
    ],
    [
      'an unset environment variable without default',
      { plugins: [router({ openai: { type: 'openai', baseUrl: 'https://api.openai.com/v1', apiKey: '${MISSING_KEY}' } })] },
      ['/plugins/0/config/providers/openai/apiKey: environment variable MISSING_KEY is not set (write "${MISSING_KEY:-}" to allow it to be empty)'],
    ],
    [
      'pricing before budget (a declared order rule)',
      { plugins: [{ name: 'auth-guard' }, { name: 'pricing' }, { name: 'budget' }, router()] },
      ['/plugins/1: "pricing" must be listed after "budget": on the way back (reverse order) pricing must set the cost before budget settles its reservation'],
    ],
    [
      'auth-guard not first, and the logger after the limits it records',
      { plugins: [{ name: 'rate-limit' }, { name: 'logger' }, { name: 'auth-guard' }, router()] },
      [
        '/plugins/1: "logger" must be listed before "rate-limit": it records rate-limit refusals, which only plugins listed before the refusing one see',
        '/plugins/2: "auth-guard" must be the first plugin listed: nothing else may run for a request that is not authenticated',
      ],
    ],
    [
      'a coordination section that is not a Redis URL, an unknown fail mode, a short lease',
      { coordination: { redis: 'http://10.0.0.5:6379', failMode: 'maybe', failModeByLimit: { budgets: 'ajar' }, leaseTtlMs: 10, shards: 2 }, plugins: [router()] },
      [
        '/coordination/shards: unknown field',
        '/coordination/redis: must match pattern "^$|^rediss?://"',
        '/coordination/failMode: must be one of "closed", "open"',
        '/coordination/failModeByLimit/budgets: must be one of "closed", "open"',
        '/coordination/leaseTtlMs: must be >= 1000',
      ],
    ],
    [
      'a model group deployment without its model: once, where it is missing',
      { plugins: [routerWithModels({ fast: { deployments: [{ provider: 'openai' }] } })] },
      ['/plugins/0/config/models/fast/deployments/0/model: is required'],
    ],
    [
      'a misspelt field in a model group',
      { plugins: [routerWithModels({ fast: { deployments: [{ provider: 'openai', model: 'gpt-4o', wieght: 2 }] } })] },
      ['/plugins/0/config/models/fast/deployments/0/wieght: unknown field'],
    ],
    [
      'a model alias without its provider prefix',
      { plugins: [routerWithModels({ fast: 'gpt-4o' })] },
      ['/plugins/0/config/models/fast: must match pattern "^[a-z0-9][a-z0-9_-]*/.+"'],
    ],
    [
      'a model entry of neither shape, and pooled keys of neither shape',
      {
        plugins: [{
          name: 'provider-router',
          config: { providers: { openai: { type: 'openai', baseUrl: 'https://api.openai.com/v1', apiKeys: [5, { key: 'k', rpm: 0 }] } }, models: { fast: 42 } },
        }],
      },
      [
        '/plugins/0/config/providers/openai/apiKeys/0: must be string or object',
        '/plugins/0/config/providers/openai/apiKeys/1/rpm: must be >= 1',
        '/plugins/0/config/models/fast: must be string or object',
      ],
    ],
    [
      'a model group naming a provider that is not configured',
      { plugins: [routerWithModels({ 'team/fast': { deployments: [{ provider: 'openai', model: 'gpt-4o' }, { provider: 'azure', model: 'gpt-4o' }] }, cheap: 'azure/gpt-4o-mini' })] },
      ['/plugins/0/config/models/team~1fast/deployments/1/provider: model group "team/fast" names provider "azure", which is not configured (providers: openai)'],
    ],
    [
      'a value that is neither of two allowed ranges, as one line',
      { plugins: [{ name: 'response-store', config: { sweepIntervalMs: 500 } }, router()] },
      ['/plugins/0/config/sweepIntervalMs: must be 0 or >= 1000'],
    ],
  ];
  for (const [name, input, expected] of rejected) {
    test(`rejects ${name}`, () => assert.deepEqual(problems(input), expected));
  }

  test('coordination defaults to no shared store, failing closed; a Redis URL may come from the environment', () => {
    assert.deepEqual(validateManifest(defaultManifest, pluginRegistry, { env: {} }).coordination, { redis: null, failMode: 'closed', failModeByLimit: {}, leaseTtlMs: 30000, commandTimeoutMs: 500, budgetReservationTtlMs: 600000 });
    const fromEnv = validateManifest({ coordination: { redis: '${REDIS_URL:-}', failMode: 'open' }, plugins: [router()] }, pluginRegistry, { env: { REDIS_URL: 'rediss://u:p@redis.internal:6380/1' } });
    assert.deepEqual(fromEnv.coordination, { redis: 'rediss://u:p@redis.internal:6380/1', failMode: 'open', failModeByLimit: {}, leaseTtlMs: 30000, commandTimeoutMs: 500, budgetReservationTtlMs: 600000 });
    assert.deepEqual(validateManifest({ coordination: { redis: '${REDIS_URL:-}' }, plugins: [router()] }, pluginRegistry, { env: {} }).coordination.redis, '');
    // Per limit: rate limits may fail open while budgets stay closed.
    const perLimit = validateManifest({ coordination: { failModeByLimit: { rateLimits: 'open' } }, plugins: [router()] }, pluginRegistry, { env: {} });
    assert.deepEqual(failModesOf(perLimit.coordination), { rateLimits: 'open', budgets: 'closed' });
    assert.deepEqual(failModesOf(fromEnv.coordination), { rateLimits: 'open', budgets: 'open' });
  });

  test('accepts the built-in default and fills every default', () => {
    const manifest: Manifest = validateManifest(defaultManifest, pluginRegistry, { env: {} });
    assert.deepEqual(manifest.server, { host: '127.0.0.1', port: 8787, maxBodyBytes: 4194304, maxBodyBytesByDialect: { 'anthropic-messages': 33554432 }, maxBodyBytesInFlight: 268435456, maxBodyBytesInFlightPerUser: 67108864, drainTimeoutMs: 10000,
      headersTimeoutMs: 20000, requestTimeoutMs: 300000, keepAliveTimeoutMs: 65000, maxConnections: 4096, maxConnectionsPerAddress: 256, maxIdleConnectionsPerAddress: 64, logLevel: 'info', cors: { allowedOrigins: [], allowCredentials: false, maxAgeSeconds: 600 } });
    assert.equal(manifest.upstream.headersTimeoutMs, 120000);
    assert.deepEqual(manifest.plugins.map((p) => p.name), ['auth-guard', 'logger', 'metrics', 'response-store', 'rate-limit', 'budget', 'pricing', 'account', 'provider-router']);
    assert.deepEqual(manifest.plugins[1]!.config, { batchSize: 200, flushIntervalMs: 50, maxQueueSize: 100000 });
    const openai = (manifest.plugins.at(-1)!.config as { providers: Record<string, { baseUrl: string; apiKey: string }> }).providers.openai!;
    assert.deepEqual(openai, { type: 'openai', baseUrl: 'https://api.openai.com/v1', apiKey: '' });
  });

  test('substitutes ${NAME} and ${NAME:-default} from the environment, inside strings too', () => {
    const manifest = validateManifest(
      { plugins: [router({ openai: { type: 'openai', baseUrl: 'http://127.0.0.1:${PORT_FROM_ENV}/v1', apiKey: '${OPENAI_API_KEY}' }, local: { type: 'openai', baseUrl: '${LOCAL_URL:-http://localhost:1234/v1}' } })] },
      pluginRegistry,
      { env },
    );
    const providers = (manifest.plugins[0]!.config as { providers: Record<string, { baseUrl: string; apiKey: string }> }).providers;
    assert.equal(providers.openai!.baseUrl, 'http://127.0.0.1:9000/v1');
    assert.equal(providers.openai!.apiKey, 'sk-env');
    assert.equal(providers.local!.baseUrl, 'http://localhost:1234/v1');
  });

  test('order rules apply only between plugins that are listed', () => {
    assert.deepEqual(problems({ plugins: [{ name: 'pricing' }, router()] }), []);
    assert.deepEqual(problems({ plugins: [{ name: 'budget' }, { name: 'pricing' }, { name: 'logger' }, router()] }), [
      '/plugins/2: "logger" must be listed before "budget": it records budget refusals, which only plugins listed before the refusing one see',
      '/plugins/2: "logger" must be listed before "pricing": on the way back (reverse order) it must write the row after pricing set the cost',
    ]);
  });

  test('the validated manifest is frozen', () => {
    const manifest = validateManifest(defaultManifest, pluginRegistry, { env: {} });
    assert.throws(() => {
      (manifest.server as { port: number }).port = 1;
    }, TypeError);
  });

  test('tollgate.example.json is the built-in default manifest', () => {
    const example = JSON.parse(readFileSync(new URL('../../tollgate.example.json', import.meta.url), 'utf8'));
    assert.deepEqual(example, defaultManifest);
  });

  test('a file that is not JSON is one problem at the root', () => {
    const path = join(tempDir(), 'bad.json');
    writeFileSync(path, '{ "plugins": [ ');
    assert.throws(() => loadManifestFile(path, pluginRegistry), (err: unknown) => {
      assert.ok(err instanceof ManifestError);
      assert.equal(err.issues.length, 1);
      assert.match(err.message, /bad\.json: 1 problem\n {2}\/: not valid JSON/);
      return true;
    });
  });
});
