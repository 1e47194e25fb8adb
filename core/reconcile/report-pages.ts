/**
 * Reads every page of a provider's report endpoint. OpenAI's organization Usage/Costs APIs and
 * Anthropic's Usage and Cost Admin API page the same way: a page is `{data: [...buckets], has_more,
 * next_page}`, and the next one is asked for with `page=<next_page>` and the same query otherwise.
 */
import { request } from 'undici';
import { ReportFetchError } from './usage-report-source.ts';

/** One page as both providers shape it. */
interface ReportPage<B> {
  data?: B[];
  has_more?: boolean;
  next_page?: string | null;
}

/** At most this many pages per report: a provider that keeps answering `has_more` cannot loop forever. */
const MAX_PAGES = 1000;
/** Longest provider error text kept in a message. */
const MAX_ERROR_CHARS = 200;

/**
 * Every bucket of `url` (with `query`; array values repeat the key, e.g. `group_by=model&group_by=...`),
 * following `next_page` while `has_more`. `headers` carry the admin key. Each call is bounded by `timeoutMs`.
 * @throws ReportFetchError on a non-2xx answer (its status and the provider's message), a body that is
 * not a page, or too many pages.
 */
export async function fetchAllPages<B>(
  url: string, query: Record<string, string | readonly string[]>, headers: Record<string, string>, timeoutMs: number, signal?: AbortSignal,
): Promise<B[]> {
  const buckets: B[] = [];
  let page: string | null = null;
  for (let n = 0; n < MAX_PAGES; n++) {
    const target = new URL(url);
    for (const [name, value] of Object.entries(query)) {
      for (const one of typeof value === 'string' ? [value] : value) target.searchParams.append(name, one);
    }
    if (page !== null) target.searchParams.set('page', page);
    const body = await getJson(target, headers, timeoutMs, signal) as ReportPage<B>;
    if (!body || typeof body !== 'object' || !Array.isArray(body.data)) throw new ReportFetchError(`${target.pathname} answered something that is not a report page`);
    buckets.push(...body.data);
    if (!body.has_more) return buckets;
    if (typeof body.next_page !== 'string' || body.next_page === '') throw new ReportFetchError(`${target.pathname} said has_more without a next_page`);
    page = body.next_page;
  }
  throw new ReportFetchError(`${url} kept paging past ${MAX_PAGES} pages`);
}

async function getJson(target: URL, headers: Record<string, string>, timeoutMs: number, signal?: AbortSignal): Promise<unknown> {
  const timeout = AbortSignal.timeout(timeoutMs);
  let res;
  try {
    res = await request(target, {
      method: 'GET', headers: { accept: 'application/json', ...headers }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs,
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
  } catch (err) {
    throw new ReportFetchError(`${target.origin}${target.pathname} unreachable: ${(err as Error).message}`);
  }
  const text = await res.body.text();
  if (res.statusCode < 200 || res.statusCode >= 300) {
    throw new ReportFetchError(`${target.pathname} answered HTTP ${res.statusCode}: ${providerMessage(text)}`, res.statusCode);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new ReportFetchError(`${target.pathname} answered a body that is not JSON`);
  }
}

/** The provider's error message (`{"error":{"message"}}`, both providers), else the start of the body. */
function providerMessage(text: string): string {
  try {
    const message = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message;
    if (typeof message === 'string') return message.slice(0, MAX_ERROR_CHARS);
  } catch {
    // not JSON: the text itself
  }
  return text.slice(0, MAX_ERROR_CHARS);
}

/** Unix seconds of a UTC day's midnight (`2026-11-01` → 1793491200). */
export function dayStartSec(day: string): number {
  return Date.parse(`${day}T00:00:00Z`) / 1000;
}

/** The UTC day (`YYYY-MM-DD`) of unix seconds or of an ISO-8601 instant. */
export function dayOf(instant: number | string): string {
  return new Date(typeof instant === 'number' ? instant * 1000 : instant).toISOString().slice(0, 10);
}

/** The day after `day`. */
export function nextDay(day: string): string {
  return dayOf(dayStartSec(day) + 86_400);
}
