/**
 * The `cache` plugin on three replicas (issue 40 item 5): three real `tollgate serve` processes on
 * one data directory and one real redis-server named by `coordination.redis`, in front of the OpenAI
 * simulator. An answer kept by one replica is a hit on the others, and it lives in Redis (not in the
 * database the replicas also share).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { SIM_REPLY, startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { startReplicas, type GatewayProcess } from '../helpers/gateway-process.ts';
import { skipWithoutRedis, startRedisServer, type RedisServer } from '../helpers/redis-server.ts';
import { connectRedis, type RedisConnection } from '../../core/coordination/redis-connection.ts';
import { createLog } from '../../core/runtime/log.ts';
import { cliJson } from '../helpers/cli.ts';
import { eventually } from '../helpers/eventually.ts';
import { tempDir } from '../helpers/tmp.ts';
import { openTestStore } from '../helpers/test-store.ts';
import { defaultManifest } from '../../core/default-manifest.ts';

const skip = skipWithoutRedis();

let sim: OpenAISimulator;
let redis: RedisServer;
/** The test's own connection to the replicas' Redis, to see where the answer was kept. */
let inspector: RedisConnection;
let dataDir: string;
let apiKey: string;
const replicas: GatewayProcess[] = [];

before(async () => {
  if (skip) return;
  [sim, redis] = await Promise.all([startOpenAISimulator(), startRedisServer()]);
  dataDir = tempDir();
  await cliJson(['users', 'create', '--name', 'carol'], { dataDir });
  apiKey = (await cliJson<{ key: string }>(['keys', 'create', '--user', 'carol'], { dataDir })).key;
  inspector = await connectRedis(redis.url, createLog('error', () => {}), undefined, undefined, 5_000);
  const manifest = structuredClone(defaultManifest) as { plugins: Array<{ name: string; config?: unknown }>; coordination?: unknown };
  manifest.plugins.splice(manifest.plugins.findIndex((p) => p.name === 'rate-limit') + 1, 0, { name: 'cache', config: {} });
  // A loaded machine can take longer than the default 500 ms to answer a script; a timeout would read as Redis down.
  manifest.coordination = { redis: redis.url, commandTimeoutMs: 5_000 };
  const env = { OPENAI_BASE_URL: sim.baseUrl, OPENAI_API_KEY: 'sk-test' };
  await startReplicas(3, { dataDir, manifest, env }, replicas);
});

after(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await inspector?.close();
  await redis?.stop();
  await sim?.close();
});

async function ask(replica: GatewayProcess, content: string) {
  const client = new OpenAI({ apiKey, baseURL: replica.baseURL, maxRetries: 0 });
  const { data, response } = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', temperature: 0, messages: [{ role: 'user', content }] }).withResponse();
  return { text: data.choices[0]!.message.content, cache: response.headers.get('x-tollgate-cache') };
}

describe('three replicas on one Redis', { skip }, () => {
  test('a miss on one replica is a hit on the two others, kept in Redis', async () => {
    const miss = await ask(replicas[0]!, 'What do replicas share?');
    assert.equal(miss.cache, 'miss');
    assert.equal(miss.text, SIM_REPLY);
    // The answer is written after the response's last byte: wait until it is in Redis.
    let kept: string[] = [];
    await eventually(async () => {
      kept = await inspector.client.keys('tollgate:kv:cache:v1:*');
      assert.equal(kept.length, 1);
    });
    assert.match(kept[0]!, /^tollgate:kv:cache:v1:u\d+:[0-9a-f]{64}$/);
    const upstreamCalls = sim.requests.length;

    for (const replica of replicas.slice(1)) {
      const hit = await ask(replica, 'What do replicas share?');
      assert.equal(hit.cache, 'hit');
      assert.equal(hit.text, miss.text);
    }
    assert.equal(sim.requests.length, upstreamCalls, 'the upstream was not called for the hits');

    const store = await openTestStore(dataDir);
    try {
      const rows = await store.db.selectFrom('plugin_kv').select('key').where('plugin', '=', 'cache').execute();
      assert.deepEqual(rows, [], 'the database the replicas share holds none of the cache\'s entries');
    } finally {
      await store.close();
    }
  });
});
