/**
 * An admin API client for tests: logs in to a running gateway as the bootstrap admin (the test
 * gateway sets its password) and sends requests with the session cookie and the gateway's own Origin,
 * as the web UI does. Override `origin` / `cookie` per call to test CSRF and session checks.
 */
import assert from 'node:assert/strict';

export const TEST_ADMIN = { username: 'admin', password: 'test admin password' } as const;

export interface AdminResponse<T = any> {
  status: number;
  headers: Headers;
  /** Parsed JSON when the response is JSON, else undefined (see `text`). */
  body: T;
  text: string;
}

export interface AdminCallOptions {
  /** `Origin` header; default the gateway's own; null = none. */
  origin?: string | null;
  /** `Cookie` header; default the logged-in session; null = none. */
  cookie?: string | null;
  headers?: Record<string, string>;
}

export interface AdminClient {
  readonly origin: string;
  /** `tollgate_session=…` as sent in `Cookie`. */
  readonly cookie: string;
  call<T = any>(method: string, path: string, body?: unknown, options?: AdminCallOptions): Promise<AdminResponse<T>>;
  get<T = any>(path: string, options?: AdminCallOptions): Promise<AdminResponse<T>>;
  post<T = any>(path: string, body?: unknown, options?: AdminCallOptions): Promise<AdminResponse<T>>;
  put<T = any>(path: string, body?: unknown, options?: AdminCallOptions): Promise<AdminResponse<T>>;
  patch<T = any>(path: string, body?: unknown, options?: AdminCallOptions): Promise<AdminResponse<T>>;
  delete<T = any>(path: string, options?: AdminCallOptions): Promise<AdminResponse<T>>;
}

/** One request to `origin + path`, without any session handling. */
export async function adminFetch<T = any>(origin: string, method: string, path: string, body?: unknown, options: AdminCallOptions & { cookieDefault?: string } = {}): Promise<AdminResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  const sendOrigin = options.origin === undefined ? origin : options.origin;
  if (sendOrigin !== null) headers.origin = sendOrigin;
  const cookie = options.cookie === undefined ? options.cookieDefault : options.cookie;
  if (cookie) headers.cookie = cookie;
  let payload: string | undefined;
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = typeof body === 'string' ? body : JSON.stringify(body);
  }
  const res = await fetch(origin + path, { method, headers, body: payload, redirect: 'manual' });
  const text = await res.text();
  const isJson = (res.headers.get('content-type') ?? '').startsWith('application/json');
  return { status: res.status, headers: res.headers, body: (isJson && text ? JSON.parse(text) : undefined) as T, text };
}

/** Logs in and returns a client carrying the session. Throws when login fails. */
export async function loginAdmin(origin: string, credentials: { username: string; password: string } = TEST_ADMIN): Promise<AdminClient> {
  const res = await adminFetch(origin, 'POST', '/admin/api/login', credentials);
  if (res.status !== 200) throw new Error(`admin login failed: ${res.status} ${res.text}`);
  const setCookie = res.headers.get('set-cookie') ?? '';
  const cookie = setCookie.split(';')[0]!;
  const call = <T>(method: string, path: string, body?: unknown, options: AdminCallOptions = {}) =>
    adminFetch<T>(origin, method, path, body, { ...options, cookieDefault: cookie });
  return {
    origin,
    cookie,
    call,
    get: (path, options) => call('GET', path, undefined, options),
    post: (path, body, options) => call('POST', path, body ?? {}, options),
    put: (path, body, options) => call('PUT', path, body ?? {}, options),
    patch: (path, body, options) => call('PATCH', path, body ?? {}, options),
    delete: (path, options) => call('DELETE', path, undefined, options),
  };
}

/** Asserts an admin API error: status, `code`, `param`, and a message. */
export function assertError(res: { status: number; body: any }, status: number, code: string, param: string | null): void {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.error.code, code);
  assert.equal(res.body.error.param, param);
  assert.equal(typeof res.body.error.message, 'string');
}
