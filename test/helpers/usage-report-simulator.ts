/**
 * The providers' usage and cost report APIs on 127.0.0.1, in their documented shapes, paging
 * included (every page holds `bucketsPerPage` daily buckets; `has_more` / `next_page` lead on):
 * - OpenAI (base `<url>/v1`): `GET /v1/organization/usage/completions`, `/usage/embeddings`,
 *   `/v1/organization/costs`: `{object:"page", data:[{object:"bucket", start_time, end_time, results}],
 *   has_more, next_page}`, admin key as `Authorization: Bearer`.
 * - Anthropic (base `<url>`): `GET /v1/organizations/usage_report/messages` and `/cost_report`:
 *   `{data:[{starting_at, ending_at, results}], has_more, next_page}`, admin key as `x-api-key` with
 *   `anthropic-version`; cost amounts are decimal strings of cents.
 * A day's results are what the test put in `results` for that endpoint and day (a bucket exists for
 * every day of the asked window, empty when nothing was put). A wrong key answers 401 in the
 * provider's error shape. Every request is recorded (path and query), so tests can count the pages.
 * Grouping follows the request as the providers document it: a usage result keeps its `api_key_id`
 * only when the call grouped by it (OpenAI `group_by=api_key_id`, Anthropic `group_by[]=api_key_id`);
 * otherwise the field is null and the day's results that differ only by key are summed into one.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer } from './sim-http.ts';

export type ReportEndpoint = 'openai-completions' | 'openai-embeddings' | 'openai-costs' | 'anthropic-usage' | 'anthropic-cost';

export interface UsageReportSimulator {
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  /** Results per endpoint, per UTC day (`YYYY-MM-DD`): set them before a run. */
  readonly results: Record<ReportEndpoint, Map<string, unknown[]>>;
  /** Every request: path and query. */
  readonly requests: Array<{ path: string; query: URLSearchParams }>;
  close(): Promise<void>;
}

const ROUTES: Record<string, ReportEndpoint> = {
  '/v1/organization/usage/completions': 'openai-completions',
  '/v1/organization/usage/embeddings': 'openai-embeddings',
  '/v1/organization/costs': 'openai-costs',
  '/v1/organizations/usage_report/messages': 'anthropic-usage',
  '/v1/organizations/cost_report': 'anthropic-cost',
};

const DAY_SEC = 86_400;

function dayOfSec(sec: number): string {
  return new Date(sec * 1000).toISOString().slice(0, 10);
}

/** Results summed over `api_key_id` (null in the sums), as a report not grouped by key gives them. */
function mergeWithoutKey(results: readonly unknown[]): unknown[] {
  const merged = new Map<string, Record<string, unknown>>();
  for (const result of results as Array<Record<string, unknown>>) {
    const keyless = { ...result, api_key_id: null };
    const identity = JSON.stringify(Object.entries(keyless).filter(([, v]) => typeof v !== 'number' && (typeof v !== 'object' || v === null)));
    const into = merged.get(identity);
    if (into) addNumbers(into, keyless);
    else merged.set(identity, structuredClone(keyless));
  }
  return [...merged.values()];
}

function addNumbers(into: Record<string, unknown>, from: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(from)) {
    if (typeof value === 'number') into[name] = Number(into[name] ?? 0) + value;
    else if (value && typeof value === 'object' && !Array.isArray(value)) addNumbers(into[name] as Record<string, unknown>, value as Record<string, unknown>);
  }
}

export async function startUsageReportSimulator(options: { openaiKey: string; anthropicKey: string; bucketsPerPage?: number }): Promise<UsageReportSimulator> {
  const perPage = options.bucketsPerPage ?? 1;
  const results: UsageReportSimulator['results'] = {
    'openai-completions': new Map(), 'openai-embeddings': new Map(), 'openai-costs': new Map(), 'anthropic-usage': new Map(), 'anthropic-cost': new Map(),
  };
  const requests: UsageReportSimulator['requests'] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://sim.invalid');
    requests.push({ path: url.pathname, query: url.searchParams });
    const endpoint = ROUTES[url.pathname];
    const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (!endpoint || req.method !== 'GET') return send(404, { error: { message: `no route ${req.method} ${url.pathname}` } });
    const openai = endpoint.startsWith('openai');
    if (openai && req.headers.authorization !== `Bearer ${options.openaiKey}`) {
      return send(401, { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' } });
    }
    if (!openai && (req.headers['x-api-key'] !== options.anthropicKey || !req.headers['anthropic-version'])) {
      return send(401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } });
    }
    const startSec = openai ? Number(url.searchParams.get('start_time')) : Date.parse(url.searchParams.get('starting_at') ?? '') / 1000;
    const endRaw = openai ? url.searchParams.get('end_time') : url.searchParams.get('ending_at');
    const endSec = endRaw ? (openai ? Number(endRaw) : Date.parse(endRaw) / 1000) : startSec + 7 * DAY_SEC;
    if (!Number.isFinite(startSec) || !Number.isFinite(endSec)) return send(400, { error: { message: 'bad time window' } });
    const days: number[] = [];
    for (let sec = startSec; sec < endSec; sec += DAY_SEC) days.push(sec);
    const first = Number(url.searchParams.get('page') ?? '0');
    const page = days.slice(first, first + perPage);
    const data = page.map((sec) => {
      const stored = results[endpoint].get(dayOfSec(sec)) ?? [];
      const groupBy = url.searchParams.getAll(openai ? 'group_by' : 'group_by[]');
      const byKey = endpoint === 'openai-costs' || endpoint === 'anthropic-cost' || groupBy.includes('api_key_id');
      const dayResults = byKey ? stored : mergeWithoutKey(stored);
      return openai
        ? { object: 'bucket', start_time: sec, end_time: sec + DAY_SEC, results: dayResults }
        : { starting_at: new Date(sec * 1000).toISOString().replace('.000Z', 'Z'), ending_at: new Date((sec + DAY_SEC) * 1000).toISOString().replace('.000Z', 'Z'), results: dayResults };
    });
    const hasMore = first + perPage < days.length;
    send(200, { ...(openai ? { object: 'page' } : {}), data, has_more: hasMore, next_page: hasMore ? String(first + perPage) : null });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, results, requests, close: () => closeServer(server) };
}
