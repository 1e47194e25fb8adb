/**
 * The floor for `npm run bench` (`BENCH_FLOOR=1`): the ceiling's undici pass-through plus the work
 * no accounting gateway can skip, done as cheaply as a few dozen lines can, so the bench shows how
 * much of Tollgate's cost over the ceiling is that work and how much is Tollgate's own. Per request:
 * the body read and `JSON.parse`d (a 400 without a model), the API key hashed (SHA-256) and looked up,
 * a GCRA take on requests and one on tokens (`core/coordination/gcra.ts`), a budget reserved and settled, the
 * upstream body `JSON.stringify`d with the model replaced; a non-streamed answer read whole and
 * `JSON.parse`d for its usage, a stream relayed as it comes with its usage event parsed; the answer
 * sent with `x-request-id` and two `x-ratelimit-*` headers; one log row written in 50 ms batches by
 * the gateway's own SQLite writer (`core/request-log/write-target-sqlite.ts`: the same schema, indexes and
 * rollups).
 *
 * Left out, so the floor is lower than any real gateway: token counting (a prompt's count is a cached
 * `length / 4`), validation beyond the model, routing, translation, the check of every stream event,
 * pricing (one fixed price), metrics, timeouts, error mapping and redaction.
 *
 * Env: CEILING_UPSTREAM (the simulator's origin + `/v1`), CEILING_API_KEY (sent upstream),
 * FLOOR_CLIENT_KEY (the key clients present). Prints `floor listening on http://…` when ready.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { nowIso, openStore } from '../core/store/store.ts';
import { createGcraLimiter } from '../core/coordination/gcra.ts';
import { newRequestId } from '../core/server.ts';
import { createSqliteWriteTarget } from '../core/request-log/write-target-sqlite.ts';
import type { PendingWrite } from '../core/request-log/write-behind.ts';

const upstream = new URL(process.env.CEILING_UPSTREAM!);
const pool = new Pool(upstream.origin, { connections: 128, pipelining: 1 });
const authorization = `Bearer ${process.env.CEILING_API_KEY ?? ''}`;
const upstreamPath = `${upstream.pathname.replace(/\/$/, '')}/chat/completions`;

const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-floor-'));
const store = openStore(join(dataDir, 'floor.db'));
const userId = Number(store.sqlite.prepare(`INSERT INTO gateway_users (name, created_at, updated_at) VALUES ('floor', ?, ?)`).run(nowIso(), nowIso()).lastInsertRowid);
const writer = createSqliteWriteTarget(store);
let queue: PendingWrite[] = [];
setInterval(() => {
  if (queue.length === 0) return;
  const batch = queue;
  queue = [];
  writer.writeBatch(batch);
}, 50).unref();

interface Principal { userId: number; budgetNanos: number; spentNanos: number; reservedNanos: number }
const principals = new Map<string, Principal>([
  [hash('sha256', process.env.FLOOR_CLIENT_KEY ?? '', 'hex'), { userId, budgetNanos: 1e18, spentNanos: 0, reservedNanos: 0 }],
]);
const requestLimits = createGcraLimiter({ limit: 100_000_000, periodMs: 60_000 });
const tokenLimits = createGcraLimiter({ limit: 1_000_000_000, periodMs: 60_000 });
const promptCounts = new Map<string, number>();
/** One price: nano-USD per token. */
const INPUT_NANOS = 150;
const OUTPUT_NANOS = 600;
const MAX_OUTPUT_TOKENS = 4_096;

interface ChatBody { model?: unknown; messages?: Array<{ content?: unknown }>; stream?: boolean }
interface Usage { prompt_tokens?: number; completion_tokens?: number }

function promptTokens(body: ChatBody): number {
  let tokens = 0;
  for (const message of body.messages ?? []) {
    const text = typeof message.content === 'string' ? message.content : '';
    let count = promptCounts.get(text);
    if (count === undefined) promptCounts.set(text, (count = Math.ceil(text.length / 4)));
    tokens += count + 4;
  }
  return tokens;
}

function refuse(res: ServerResponse, status: number): void {
  res.writeHead(status, { 'content-type': 'application/json', connection: 'close' }).end('{"error":{"message":"refused"}}');
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const startedAt = performance.now();
    const startedAtMs = Date.now();
    const id = newRequestId();
    const header = req.headers.authorization ?? '';
    const principal = principals.get(hash('sha256', header.slice(7), 'hex'));
    if (!principal) return refuse(res, 401);
    let body: ChatBody;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatBody;
    } catch {
      return refuse(res, 400);
    }
    if (typeof body.model !== 'string' || !Array.isArray(body.messages)) return refuse(res, 400);
    const model = body.model;
    const prompt = promptTokens(body);
    const key = String(principal.userId);
    const requests = requestLimits.tryTake(key, 1, startedAtMs);
    const tokens = tokenLimits.tryTake(key, prompt + MAX_OUTPUT_TOKENS, startedAtMs);
    const reservedNanos = prompt * INPUT_NANOS + MAX_OUTPUT_TOKENS * OUTPUT_NANOS;
    if (!requests.allowed || !tokens.allowed || principal.spentNanos + principal.reservedNanos + reservedNanos > principal.budgetNanos) return refuse(res, 429);
    principal.reservedNanos += reservedNanos;
    const settle = (status: number, usage: Usage | null, ttftMs: number | null) => {
      const completion = usage?.completion_tokens ?? 0;
      const costNanos = (usage?.prompt_tokens ?? prompt) * INPUT_NANOS + completion * OUTPUT_NANOS;
      principal.reservedNanos -= reservedNanos;
      principal.spentNanos += costNanos;
      tokenLimits.adjust(key, (usage?.prompt_tokens ?? prompt) + completion - prompt - MAX_OUTPUT_TOKENS, Date.now());
      queue.push({
        kind: 'request', group: id, row: {
          request_id: id, gateway_user_id: principal.userId, api_key_id: null, provider: 'openai', model_requested: model, model_served: model,
          status, error_code: null, prompt_tokens: usage?.prompt_tokens ?? prompt, completion_tokens: completion, cached_tokens: 0,
          latency_ms: Math.round(performance.now() - startedAt), ttft_ms: ttftMs, stream: body.stream ? 1 : 0, created_at: nowIso(startedAtMs),
          cache_write_tokens: 0, cost_nanos: costNanos, usage_estimated: 0, unpriced: 0, endpoint: 'chat.completions.create', attempts: null,
          usage_reported: usage ? JSON.stringify(usage) : null, billed_price: null, error_plugin: null, plugin_fields: null, tags: null, upstream_key: null,
        },
      });
    };
    const headers = (contentType: string) => ({
      'content-type': contentType, 'x-request-id': id,
      'x-ratelimit-remaining-requests': String(requests.remaining), 'x-ratelimit-remaining-tokens': String(tokens.remaining),
    });
    const upstreamBody = JSON.stringify(Object.assign({}, body, { model: model.slice(model.indexOf('/') + 1) }));
    pool.request({ method: 'POST', path: upstreamPath, headers: { 'content-type': 'application/json', authorization }, body: upstreamBody })
      .then(async ({ statusCode, headers: upstreamHeaders, body: answer }) => {
        const contentType = String(upstreamHeaders['content-type'] ?? 'application/json');
        if (!body.stream) {
          const text = await answer.text();
          const usage = statusCode === 200 ? (JSON.parse(text) as { usage?: Usage }).usage ?? null : null;
          res.writeHead(statusCode, headers(contentType)).end(text);
          return settle(statusCode, usage, null);
        }
        res.writeHead(statusCode, headers(contentType));
        let usage: Usage | null = null;
        let ttftMs: number | null = null;
        for await (const chunk of answer) {
          ttftMs ??= Math.round(performance.now() - startedAt);
          res.write(chunk);
          const text = (chunk as Buffer).toString('utf8');
          const usageAt = text.indexOf('"usage":{');
          const at = usageAt < 0 ? -1 : text.lastIndexOf('data: {', usageAt);
          if (at >= 0) usage = (JSON.parse(text.slice(at + 6, text.indexOf('\n', at))) as { usage?: Usage }).usage ?? usage;
        }
        res.end();
        settle(statusCode, usage, ttftMs);
      })
      .catch(() => {
        if (!res.headersSent) refuse(res, 502);
        else res.destroy();
        settle(502, null, null);
      });
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`floor listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => {
  writer.writeBatch(queue);
  store.sqlite.close();
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(0);
}));
