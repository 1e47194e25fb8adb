// One door to the admin JSON API (docs/admin-api.md): every page calls api(), so error
// handling and the "session ended → show login" signal live in one place.

/** Error thrown for any non-2xx answer; fields mirror the contract's error body. */
export class ApiError extends Error {
  /**
   * @param {number} status HTTP status (0 when the network failed)
   * @param {{message?: string, type?: string, code?: string, param?: string|null}} err
   */
  constructor(status, err = {}) {
    super(err.message || `Request failed (HTTP ${status})`);
    this.name = 'ApiError';
    this.status = status;
    this.code = err.code ?? null;
    this.param = err.param ?? null;
    this.type = err.type ?? null;
  }
}

/**
 * Calls `/admin/api<path>` with the session cookie.
 * @param {'GET'|'POST'|'PUT'|'PATCH'|'DELETE'} method
 * @param {string} path relative to /admin/api, e.g. '/users?limit=50'
 * @param {unknown} [body] sent as JSON when given
 * @returns {Promise<any>} parsed JSON, or null for 204 / empty bodies
 * @throws {ApiError} on non-2xx (and dispatches 'tollgate:unauthorized' on 401)
 */
export async function api(method, path, body) {
  const init = { method, credentials: 'same-origin', headers: { accept: 'application/json' } };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(`/admin/api${path}`, init);
  } catch (cause) {
    throw new ApiError(0, { message: 'Cannot reach the gateway. Is it running?', type: 'network_error' });
  }
  const text = res.status === 204 ? '' : await res.text();
  let parsed = null;
  if (text) {
    try { parsed = JSON.parse(text); } catch { parsed = null; }
  }
  if (!res.ok) {
    // Login itself answers 401 for a wrong password: that is a form error, not a lost session.
    if (res.status === 401 && path !== '/login') window.dispatchEvent(new Event('tollgate:unauthorized'));
    throw new ApiError(res.status, parsed && parsed.error ? parsed.error : { message: text.slice(0, 200) || undefined });
  }
  return parsed;
}

/**
 * Builds a query string from an object, skipping empty values.
 * @param {Record<string, string|number|null|undefined>} params
 * @returns {string} '' or '?a=1&b=2'
 */
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}
