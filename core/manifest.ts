/**
 * The manifest: which plugins run, in which order, with what config. Loaded once at boot from JSON,
 * `${NAME}` / `${NAME:-default}` replaced from the environment, validated with Ajv (the top-level
 * schema, then each plugin's own config schema, defaults filled in), every error reported at once
 * with its JSON pointer, then deep-frozen. Nothing is re-validated per request.
 */
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject } from 'ajv';
import type { PluginFactory } from './plugin.ts';
import type { UpstreamSettings } from './upstream/upstream-client.ts';
import type { JsonSchema } from './json-schema.ts';
import type { LogLevel } from './runtime/log.ts';
import type { CorsSettings } from './http/cors.ts';
import type { CoordinationSettings } from './coordination/index.ts';
import { isValidTimeZone } from './money/calendar-period.ts';

/**
 * Every plugin a manifest may name, by name. The composition root (`tollgate.ts`) builds it and hands
 * it to the CLI and the gateway; nothing in `core/` or `cli/` knows a plugin by itself.
 */
export type PluginRegistry = ReadonlyMap<string, PluginFactory>;

export interface PluginEntry {
  name: string;
  config: Record<string, unknown>;
}

export interface ServerSettings {
  host: string;
  port: number;
  maxBodyBytes: number;
  /** Body limits of single dialects (by dialect id), over `maxBodyBytes`. */
  maxBodyBytesByDialect: Record<string, number>;
  /** Bytes of request bodies read and parsed at once, process-wide (503 `bodies_in_flight_full` beyond). */
  maxBodyBytesInFlight: number;
  drainTimeoutMs: number;
  /** Time a client has to send its request headers (408 and close after). */
  headersTimeoutMs: number;
  /** Time a client has to send its whole request, body included (408 and close after). */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection is kept open. */
  keepAliveTimeoutMs: number;
  /** Open client connections at most; a new one beyond closes the oldest idle one, or is closed when none is idle. */
  maxConnections: number;
  /** Open client connections per remote address at most (then as for `maxConnections`). */
  maxConnectionsPerAddress: number;
  /** Idle client connections (serving no request) per remote address at most; a new one closes the oldest. */
  maxIdleConnectionsPerAddress: number;
  logLevel: LogLevel;
  /** CORS for browser apps on other origins (`cors.ts`); no origins = off. */
  cors: CorsSettings;
}

/** The database: the data directory's SQLite file unless `url` names a PostgreSQL server. */
export interface StoreSettings {
  /** `postgres://…`; null or empty = SQLite in the data directory (`TOLLGATE_DATABASE_URL` may give one). */
  url: string | null;
  /** PostgreSQL pool size per replica. */
  maxConnections: number;
}

/** The admin web UI and its API (`/admin/`). */
export interface AdminSettings {
  enabled: boolean;
  sessionIdleMinutes: number;
  sessionMaxHours: number;
  loginMaxFailures: number;
  loginWindowMinutes: number;
}

export interface Manifest {
  server: ServerSettings;
  admin: AdminSettings;
  upstream: UpstreamSettings;
  /** Where the data lives (`data-dir.ts` `openGatewayStore`). */
  store: StoreSettings;
  /** State shared by several replicas (`coordination/index.ts`). */
  coordination: CoordinationSettings;
  plugins: PluginEntry[];
}

/** One validation problem: where (RFC 6901 JSON pointer into the manifest) and what. */
export interface ManifestIssue {
  pointer: string;
  message: string;
}

export class ManifestError extends Error {
  readonly issues: readonly ManifestIssue[];
  constructor(source: string, issues: ManifestIssue[]) {
    super(`${source}: ${issues.length} problem${issues.length === 1 ? '' : 's'}\n${issues.map(formatIssue).join('\n')}`);
    this.name = 'ManifestError';
    this.issues = issues;
  }
}

export function formatIssue(issue: ManifestIssue): string {
  return `  ${issue.pointer || '/'}: ${issue.message}`;
}

const manifestSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['plugins'],
  properties: {
    $schema: { type: 'string' },
    server: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        host: { type: 'string', minLength: 1, default: '127.0.0.1', description: 'Interface to listen on.' },
        port: { type: 'integer', minimum: 0, maximum: 65535, default: 8787, description: 'TCP port; 0 picks a free one.' },
        maxBodyBytes: { type: 'integer', minimum: 1024, default: 4 * 1024 * 1024, description: 'Largest request body accepted (413 above it).' },
        maxBodyBytesByDialect: {
          type: 'object',
          default: { 'anthropic-messages': 32 * 1024 * 1024 },
          description: 'Largest body per dialect id, where it differs from maxBodyBytes. Agents send whole sessions: Anthropic Messages (Claude Code) defaults to 32 MiB, Anthropic\'s own limit.',
          additionalProperties: { type: 'integer', minimum: 1024, description: 'Bytes.' },
        },
        maxBodyBytesInFlight: {
          type: 'integer', minimum: 1024, default: 256 * 1024 * 1024,
          description: 'Bytes of request bodies being read and parsed at once, all clients together (a body holds its content-length from before it is read until it is parsed). A body that does not fit is answered 503 bodies_in_flight_full with Retry-After: 1 at once, rather than queued: a queue would hold sockets and memory the cap exists to bound. Keep it at least the largest maxBodyBytesByDialect.',
        },
        drainTimeoutMs: { type: 'integer', minimum: 0, default: 10_000, description: 'On SIGTERM, how long in-flight requests may take to finish before they are cut.' },
        headersTimeoutMs: { type: 'integer', minimum: 100, default: 20_000, description: 'Time a client has to send its request headers; then 408 and the connection is closed (slow-header clients cannot hold sockets).' },
        requestTimeoutMs: { type: 'integer', minimum: 100, default: 300_000, description: 'Time a client has to send its whole request, body included (408 after). Does not limit the answer. At least headersTimeoutMs.' },
        keepAliveTimeoutMs: { type: 'integer', minimum: 100, default: 65_000, description: 'How long an idle keep-alive client connection is kept open (above the 60 s of common load balancers).' },
        maxConnections: { type: 'integer', minimum: 1, default: 4096, description: 'Open client connections at most. At the cap a new connection closes the oldest idle one (serving no request), or is closed at once when none is idle. Keep it below the process\'s file-descriptor limit (logged at start).' },
        maxConnectionsPerAddress: { type: 'integer', minimum: 1, default: 256, description: 'Open client connections per remote address at most (loopback included). At the cap a new connection closes the address\'s oldest idle one, or is closed at once when none is idle.' },
        maxIdleConnectionsPerAddress: { type: 'integer', minimum: 1, default: 64, description: 'Idle client connections per remote address at most: connections serving no request (headers not yet complete, or kept alive between requests). A new connection beyond it closes the address\'s oldest idle one, so stalled clients cannot lock an address or the gateway out.' },
        logLevel: { enum: ['debug', 'info', 'warn', 'error'], default: 'info', description: 'Server log verbosity.' },
        cors: {
          type: 'object',
          additionalProperties: false,
          default: {},
          description: 'CORS for browser apps calling /api/* from other origins (never /admin). Off until allowedOrigins lists an origin.',
          properties: {
            allowedOrigins: {
              type: 'array', default: [], uniqueItems: true,
              items: { type: 'string', pattern: '^(\\*|https?://[^/\\s]+)$' },
              description: 'Origins allowed to call the API, exactly as browsers send them ("https://app.example", "http://localhost:5173"), or "*" for any.',
            },
            allowCredentials: { type: 'boolean', default: false, description: 'Answer Access-Control-Allow-Credentials: true to the listed origins (only for apps that send cookies; API keys need no credentials mode). Not with "*".' },
            maxAgeSeconds: { type: 'integer', minimum: 0, maximum: 86_400, default: 600, description: 'How long browsers may cache a preflight answer.' },
          },
        },
      },
    },
    admin: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        enabled: { type: 'boolean', default: true, description: 'Serve the admin web UI at /admin/ and its JSON API at /admin/api.' },
        sessionIdleMinutes: { type: 'integer', minimum: 1, default: 120, description: 'An admin session ends after this long without a request.' },
        sessionMaxHours: { type: 'integer', minimum: 1, default: 12, description: 'An admin session ends this long after login, active or not.' },
        loginMaxFailures: { type: 'integer', minimum: 1, default: 5, description: 'Failed logins allowed per username within the window (4x that per client address) before 429.' },
        loginWindowMinutes: { type: 'integer', minimum: 1, default: 15, description: 'The window failed logins are counted in.' },
      },
    },
    upstream: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        connectTimeoutMs: { type: 'integer', minimum: 0, default: 10_000, description: 'TCP/TLS connect timeout (504 upstream_timeout).' },
        headersTimeoutMs: { type: 'integer', minimum: 0, default: 120_000, description: 'Time to the upstream response headers (504).' },
        bodyTimeoutMs: { type: 'integer', minimum: 0, default: 120_000, description: 'Longest silence between two body chunks (504 before headers, error event after).' },
        maxResponseBytes: { type: 'integer', minimum: 1024, default: 16 * 1024 * 1024, description: 'Largest non-streamed upstream body read (it is held whole in memory); beyond it 502 upstream_response_too_large.' },
        maxStreamBytes: { type: 'integer', minimum: 1024, default: 64 * 1024 * 1024, description: 'Most bytes relayed from one upstream stream; beyond it the stream ends with the dialect\'s error event (upstream_response_too_large), billed for what was sent.' },
        connectionsPerOrigin: { type: 'integer', minimum: 1, default: 256, description: 'Keep-alive pool size per upstream origin.' },
        queueTimeoutMs: { type: 'integer', minimum: 0, default: 30_000, description: 'Longest a call waits for a connection when its origin\'s pool (connectionsPerOrigin) is full; then 503 upstream_busy. 0 = no limit.' },
        requestDeadlineMs: { type: 'integer', minimum: 0, default: 300_000, description: 'Longest a non-streamed upstream call may take in all, headers and body (504 upstream_timeout); 0 = none. Reasoning models can take minutes.' },
      },
    },
    store: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'The database. Without url it is the SQLite file tollgate.db in the data directory (one replica).',
      properties: {
        url: {
          type: ['string', 'null'], default: null, pattern: '^$|^postgres(ql)?://',
          description: 'PostgreSQL URL (postgres://user:password@host:5432/db; PostgreSQL 15+) for several replicas; null or "" = SQLite in the data directory, unless TOLLGATE_DATABASE_URL is set.',
        },
        maxConnections: { type: 'integer', minimum: 1, default: 10, description: 'PostgreSQL connections per replica at most.' },
      },
    },
    coordination: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'State several replicas share. Without redis everything is kept in this process (one replica).',
      properties: {
        redis: {
          type: ['string', 'null'], default: null, pattern: '^$|^rediss?://',
          description: 'Redis URL (redis://[user:password@]host:port[/db], rediss:// for TLS) where every replica counts rate limits (rpm, tpm, concurrency) and budgets (spend and reservations); null or "" = none, then TOLLGATE_REDIS_URL if set.',
        },
        failMode: {
          enum: ['closed', 'open'], default: 'closed',
          description: 'While Redis is unreachable: "closed" answers requests under an rpm/tpm limit or a budget 503 coordination_unavailable; "open" lets them through (rate limits uncounted, budgets counted per replica) and logs a warning. Either way concurrency limits are counted by each replica alone meanwhile and never refuse for Redis.',
        },
        failModeByLimit: {
          type: 'object', additionalProperties: false, default: {},
          description: 'failMode for one kind of limit, over failMode: e.g. {"rateLimits": "open"} keeps serving uncounted rpm/tpm while Redis is down, budgets still closed.',
          properties: { rateLimits: { enum: ['closed', 'open'] }, budgets: { enum: ['closed', 'open'] } },
        },
        leaseTtlMs: {
          type: 'integer', minimum: 1_000, default: 30_000,
          description: 'How long a request\'s concurrency slot lives in Redis without renewal (a live replica renews it every third of this): the most a replica that dies mid-request keeps slots taken.',
        },
        commandTimeoutMs: {
          type: 'integer', minimum: 50, default: 500,
          description: 'How long a replica waits for one Redis call before it counts as unreachable (then failMode applies), ms. Raise it where replicas run on busy machines.',
        },
        budgetReservationTtlMs: {
          type: 'integer', minimum: 1_000, default: 600_000,
          description: 'How long a request\'s budget reservation lives in Redis (not renewed): the most a replica that dies mid-request keeps budget reserved. Keep it above the longest request (upstream.requestDeadlineMs, long streams): a reservation that expires first no longer holds its share, though the cost is still billed.',
        },
      },
    },
    plugins: {
      type: 'array',
      minItems: 1,
      description: 'Plugins in the order their request hooks run (responses run in reverse).',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name'],
        properties: {
          name: { type: 'string', description: 'A registered plugin name (the plugin registry).' },
          config: { type: 'object', default: {}, description: "The plugin's config, validated by its own schema." },
        },
      },
    },
  },
};

/** JSON pointer of the manifest's plugin list; an entry is `${PLUGINS_POINTER}/<index>`. */
const PLUGINS_POINTER = '/plugins';

const ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Replaces `${NAME}` and `${NAME:-default}` in every string; unset names without a default are issues. */
export function substituteEnv(value: unknown, env: NodeJS.ProcessEnv, issues: ManifestIssue[], pointer = ''): unknown {
  if (typeof value === 'string') {
    return value.replace(ENV_REF, (_match, name: string, fallback: string | undefined) => {
      const set = env[name];
      if (set !== undefined && set !== '') return set;
      if (fallback !== undefined) return fallback;
      issues.push({ pointer, message: `environment variable ${name} is not set (write "\${${name}:-}" to allow it to be empty)` });
      return '';
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => substituteEnv(v, env, issues, `${pointer}/${i}`));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = substituteEnv(v, env, issues, `${pointer}/${escapePointer(k)}`);
    return out;
  }
  return value;
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Which branch of `alternatives` (a `oneOf` / `anyOf` error) `e` belongs to, or -1 for none. */
function branchOf(e: ErrorObject, alternatives: ErrorObject): number {
  const under = `${alternatives.schemaPath}/`;
  const instance = alternatives.instancePath;
  if (e === alternatives || !e.schemaPath.startsWith(under)) return -1;
  // The same schema validates every entry of a map or list: only this entry's errors are its branches'.
  if (e.instancePath !== instance && !e.instancePath.startsWith(`${instance}/`)) return -1;
  return Number(e.schemaPath.slice(under.length).split('/')[0]);
}

/** One error in place of a failed `oneOf` / `anyOf` at the same place: "must be string or object". */
function eitherError(alternatives: ErrorObject, messages: string[]): ErrorObject {
  const must = messages.every((m) => m.startsWith('must be ')) ? messages.map((m) => m.slice('must be '.length)) : null;
  const message = must ? `must be ${[...new Set(must)].join(' or ')}` : messages.join(', or ');
  return { ...alternatives, keyword: 'either', params: {}, message };
}

/**
 * Ajv reports a value that fits no branch of a `oneOf` / `anyOf` with every branch's errors and one
 * "must match exactly one schema in oneOf" more: a mistake inside a model group came out as three
 * lines, the first a misleading "must be string". This keeps the errors of the branch the value was
 * meant for, the one whose `type` it has; a value of no branch's type gets one "must be string or
 * object"; several branches of its type each failing on the value itself (`0` or `>= 1000`) one
 * "must be 0 or >= 1000"; else the branch with the fewest errors. Outer alternatives are resolved
 * first, so an alternative inside a dropped branch goes with it.
 */
function collapseAlternatives(errors: readonly ErrorObject[]): ErrorObject[] {
  let out = [...errors];
  const alternatives = errors
    .filter((e) => (e.keyword === 'oneOf' || e.keyword === 'anyOf') && !(e.params as { passingSchemas?: unknown }).passingSchemas)
    .sort((a, b) => a.schemaPath.length - b.schemaPath.length);
  for (const alternative of alternatives) {
    if (!out.includes(alternative)) continue;
    const branches = new Map<number, ErrorObject[]>();
    for (const e of out) {
      const i = branchOf(e, alternative);
      if (i >= 0) branches.set(i, [...(branches.get(i) ?? []), e]);
    }
    const isOwnTypeError = (i: number) => (e: ErrorObject) =>
      e.keyword === 'type' && e.instancePath === alternative.instancePath && e.schemaPath === `${alternative.schemaPath}/${i}/type`;
    const fitting = [...branches].filter(([i, list]) => !list.some(isOwnTypeError(i))).map(([, list]) => list);
    let kept: ErrorObject[];
    if (fitting.length === 0) kept = [eitherError(alternative, [...branches].flatMap(([i, list]) => list.filter(isOwnTypeError(i)).map(messageOf)))];
    else if (fitting.length > 1 && fitting.every((list) => list.length === 1 && list[0]!.instancePath === alternative.instancePath)) {
      kept = [eitherError(alternative, fitting.map((list) => messageOf(list[0]!)))];
    } else kept = fitting.sort((a, b) => a.length - b.length)[0]!;
    const dropped = new Set([alternative, ...[...branches.values()].flat()]);
    const at = out.findIndex((e) => dropped.has(e));
    out = out.filter((e) => !dropped.has(e));
    out.splice(at, 0, ...kept);
  }
  return out;
}

/** The message of an error that stays at its own pointer (`required` and `additionalProperties` move to the field's). */
function messageOf(e: ErrorObject): string {
  switch (e.keyword) {
    case 'enum':
      return `must be one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(e.params.allowedValue)}`;
    default:
      return e.message ?? 'is invalid';
  }
}

function ajvIssues(errors: ErrorObject[] | null | undefined, prefix: string): ManifestIssue[] {
  return collapseAlternatives(errors ?? []).map((e) => {
    const pointer = prefix + e.instancePath;
    switch (e.keyword) {
      case 'additionalProperties':
        return { pointer: `${pointer}/${escapePointer(String(e.params.additionalProperty))}`, message: 'unknown field' };
      case 'required':
        return { pointer: `${pointer}/${escapePointer(String(e.params.missingProperty))}`, message: 'is required' };
      default:
        return { pointer, message: messageOf(e) };
    }
  });
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

export interface ValidateOptions {
  env?: NodeJS.ProcessEnv;
  /** Where the manifest came from, for messages. */
  source?: string;
}

/** True for an IANA timezone this runtime knows (`UTC`, `Europe/Paris`); the schema format `time-zone`. */
export function isTimeZone(tz: string): boolean {
  return isValidTimeZone(tz);
}

/**
 * Validates a parsed manifest against the registry. Returns the frozen manifest with defaults
 * filled in; throws `ManifestError` listing every problem.
 */
export function validateManifest(input: unknown, registry: PluginRegistry, options: ValidateOptions = {}): Manifest {
  const issues: ManifestIssue[] = [];
  const substituted = substituteEnv(structuredClone(input), options.env ?? process.env, issues);
  const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false });
  ajv.addFormat('time-zone', { type: 'string', validate: isTimeZone });
  if (!ajv.validate(manifestSchema, substituted)) issues.push(...ajvIssues(ajv.errors, ''));

  const server = (substituted as { server?: Partial<ServerSettings> }).server;
  if (server && typeof server.requestTimeoutMs === 'number' && typeof server.headersTimeoutMs === 'number' && server.requestTimeoutMs < server.headersTimeoutMs) {
    issues.push({ pointer: '/server/requestTimeoutMs', message: `must be >= headersTimeoutMs (${server.headersTimeoutMs}): the whole request includes its headers` });
  }

  const cors = server?.cors;
  if (cors?.allowCredentials === true && Array.isArray(cors.allowedOrigins) && cors.allowedOrigins.includes('*')) {
    issues.push({
      pointer: '/server/cors/allowCredentials',
      message: 'cannot be true while allowedOrigins has "*": any site could then read the answers to its visitors\' credentialed calls; list the origins that may send credentials instead of "*"',
    });
  }

  const plugins = (substituted as { plugins?: unknown }).plugins;
  if (Array.isArray(plugins)) {
    const seen = new Set<string>();
    const terminal: number[] = [];
    plugins.forEach((entry: unknown, i) => {
      const name = (entry as { name?: unknown } | null)?.name;
      if (typeof name !== 'string') return;
      const factory = registry.get(name);
      if (!factory) {
        issues.push({ pointer: `${PLUGINS_POINTER}/${i}/name`, message: `unknown plugin "${name}"; known plugins: ${[...registry.keys()].join(', ')}` });
        return;
      }
      if (seen.has(name)) issues.push({ pointer: `${PLUGINS_POINTER}/${i}/name`, message: `plugin "${name}" is listed twice` });
      seen.add(name);
      if (factory.terminal) terminal.push(i);
      const e = entry as { config?: unknown };
      if (e.config === undefined) e.config = {};
      if (!ajv.validate(factory.configSchema, e.config)) issues.push(...ajvIssues(ajv.errors, `${PLUGINS_POINTER}/${i}/config`));
      else for (const p of factory.checkConfig?.(e.config) ?? []) issues.push({ pointer: `${PLUGINS_POINTER}/${i}/config${p.pointer}`, message: p.message });
    });
    const terminalNames = [...registry.values()].filter((f) => f.terminal).map((f) => f.name);
    if (terminal.length === 0 && plugins.length > 0) {
      issues.push({ pointer: PLUGINS_POINTER, message: `one routing plugin (${terminalNames.join(' or ')}) must be listed, last` });
    } else if (terminal.length === 1 && terminal[0] !== plugins.length - 1) {
      issues.push({ pointer: `${PLUGINS_POINTER}/${terminal[0]}`, message: 'the routing plugin must be the last one (it is terminal)' });
    } else if (terminal.length > 1) {
      issues.push({ pointer: `${PLUGINS_POINTER}/${terminal[1]}`, message: 'only one routing plugin may be listed' });
    }
    issues.push(...orderIssues(plugins, registry));
  }
  if (issues.length > 0) throw new ManifestError(options.source ?? 'manifest', issues);
  return deepFreeze(substituted as Manifest);
}

/**
 * The plugins' declared order rules (`PluginFactory.first`, `order`), checked between the plugins
 * actually listed; a rule naming an absent plugin does not apply.
 */
function orderIssues(plugins: unknown[], registry: ReadonlyMap<string, PluginFactory>): ManifestIssue[] {
  const position = new Map<string, number>();
  plugins.forEach((entry, i) => {
    const name = (entry as { name?: unknown } | null)?.name;
    if (typeof name === 'string' && registry.has(name) && !position.has(name)) position.set(name, i);
  });
  const issues: ManifestIssue[] = [];
  for (const [name, i] of position) {
    const factory = registry.get(name)!;
    if (factory.first && i !== 0) issues.push({ pointer: `${PLUGINS_POINTER}/${i}`, message: `"${name}" must be the first plugin listed: ${factory.first.why}` });
    for (const rule of factory.order ?? []) {
      const other = position.get(rule.plugin);
      if (other === undefined) continue;
      if (rule.relation === 'after' ? i < other : i > other) {
        issues.push({ pointer: `${PLUGINS_POINTER}/${i}`, message: `"${name}" must be listed ${rule.relation} "${rule.plugin}": ${rule.why}` });
      }
    }
  }
  return issues;
}

/** Reads and validates a manifest file. Throws `ManifestError` (with every problem) or a read error. */
export function loadManifestFile(path: string, registry: PluginRegistry, options: Omit<ValidateOptions, 'source'> = {}): Manifest {
  const text = readFileSync(path, 'utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ManifestError(path, [{ pointer: '', message: `not valid JSON (${(err as Error).message})` }]);
  }
  return validateManifest(parsed, registry, { ...options, source: path });
}
