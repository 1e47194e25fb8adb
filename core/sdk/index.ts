/**
 * `tollgate/plugin`: the public plugin SDK, the one module an operator's plugin imports
 * (`docs/plugins.md`). Built to `dist/plugin.js` with its types (`bin/build.js`); first-party plugins
 * built on the SDK alone (cache, guardrails) import this file and nothing else of the gateway, which
 * `bin/check-layers.js` enforces.
 *
 * Everything exported here is a promise under semver (`PLUGIN_API_VERSION`); see `./types.ts`.
 */
import { GatewayError } from '../errors.ts';
import type { ChatCompletion, DefinedPlugin, Exchange, GatewayErrorLike, LogFieldValue, PluginDefinition, Reply } from './types.ts';

export type * from './types.ts';

/** The SDK generation this gateway runs; `definePlugin` stamps it, and the loader refuses another. */
export const PLUGIN_API_VERSION = 1 as const;

/** A plugin's name: lowercase letters, digits and `-`, starting with a letter (it labels metrics and log rows). */
export const PLUGIN_NAME = /^[a-z][a-z0-9-]{0,62}$/;

/**
 * Declares a plugin kind: the default export of a plugin module. Checks the name and stamps the
 * definition with `apiVersion: 1`. Throws `TypeError` for a name `PLUGIN_NAME` refuses or a missing
 * `create` (a mistake of the author, reported when the module loads).
 */
export function definePlugin<C = Record<string, unknown>, S = unknown>(definition: PluginDefinition<C, S>): DefinedPlugin<C, S> {
  if (typeof definition?.name !== 'string' || !PLUGIN_NAME.test(definition.name)) {
    throw new TypeError(`definePlugin: name must match ${String(PLUGIN_NAME)} (lowercase letters, digits, -), got ${JSON.stringify(definition?.name)}`);
  }
  if (typeof definition.create !== 'function') throw new TypeError(`definePlugin(${definition.name}): create(config, ctx) is required`);
  return Object.freeze({ ...definition, apiVersion: PLUGIN_API_VERSION });
}

/**
 * A local answer for `onRequest` to return: `status`, a JSON `body` (serialized by the gateway) and
 * extra headers. The request goes no further (no upstream call); the response hooks still run.
 */
export function reply(status: number, body: unknown, headers?: Record<string, string>): Reply {
  return headers === undefined ? { kind: 'reply', status, body } : { kind: 'reply', status, body, headers };
}

/**
 * A local chat answer for `onRequest` to return: `answer` (a canonical `chat.completion`, e.g. one
 * `onAnswer` kept) is rendered in the client's dialect, as one JSON body or as a stream of its chunks
 * when the client asked for a stream, with status 200 and `headers`. No upstream is called and nothing
 * is billed (the request's usage stays empty). Only for a chat call (`ex.request` has `messages`).
 */
export function replyAnswer(answer: ChatCompletion, headers?: Record<string, string>): Reply {
  return headers === undefined ? { kind: 'reply', status: 200, body: null, answer } : { kind: 'reply', status: 200, body: null, headers, answer };
}

/** Options of `gatewayError`. */
export interface GatewayErrorOptions {
  /** The error `type` (OpenAI's vocabulary); default by status: `invalid_request_error` for 4xx, `api_error` for 5xx. */
  type?: string;
  /** The request field at fault (`messages[2].content`), when one is. */
  param?: string;
  /** Response headers to send with it (`retry-after`). */
  headers?: Record<string, string>;
}

/**
 * The error a hook throws to refuse a request: the client gets `status` (400–599) and a body in its
 * dialect's own error shape naming `code` (snake_case, e.g. `content_blocked`) and `message` (shown to
 * the caller: never put a secret or the request's content in it). Any other thrown value is a plugin
 * failure (500 `plugin_error`). Throws `RangeError` for a status outside 400–599.
 */
export function gatewayError(status: number, code: string, message: string, options: GatewayErrorOptions = {}): GatewayErrorLike {
  if (!Number.isInteger(status) || status < 400 || status > 599) throw new RangeError(`gatewayError: status must be an integer from 400 to 599, got ${status}`);
  return new GatewayError({
    status, code, message,
    type: options.type ?? (status >= 500 ? 'api_error' : 'invalid_request_error'),
    ...(options.param === undefined ? {} : { param: options.param }),
    ...(options.headers === undefined ? {} : { headers: options.headers }),
  });
}

/**
 * Adds `name: value` to the request's log row (column `plugin_fields`, a JSON object; shown in the
 * admin UI's log detail). Name it after the plugin (`acme.tagged`), so plugins never overwrite each
 * other's; a later write of a name replaces it. Up to 32 fields a request; strings are cut to 256 characters.
 */
export function logField(ex: Exchange, name: string, value: LogFieldValue): void {
  const view = ex as { logFields: Record<string, LogFieldValue> | null };
  const fields = (view.logFields ??= {});
  if (!(name in fields) && Object.keys(fields).length >= MAX_LOG_FIELDS) return;
  fields[name] = typeof value === 'string' && value.length > MAX_LOG_FIELD_CHARS ? value.slice(0, MAX_LOG_FIELD_CHARS) : value;
}

const MAX_LOG_FIELDS = 32;
const MAX_LOG_FIELD_CHARS = 256;
