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
import { manifestSchema } from './manifest-schema.ts';
import type { LogLevel } from './runtime/log.ts';
import type { CorsSettings } from './http/cors.ts';
import type { CoordinationSettings } from './coordination/index.ts';
import type { ReconciliationSettings } from './reconcile/reconcile-job.ts';
import { isValidTimeZone } from './money/calendar-period.ts';
import type { TracingSection } from './telemetry/tracing-settings.ts';

/**
 * Every plugin a manifest may name, by name. The composition root (`tollgate.ts`) builds it and hands
 * it to the CLI and the gateway; nothing in `core/` or `cli/` knows a plugin by itself.
 */
export type PluginRegistry = ReadonlyMap<string, PluginFactory>;

export interface PluginEntry {
  name: string;
  config: Record<string, unknown>;
  /**
   * The file (`./x.mjs`, relative to the manifest's folder) or package the plugin was loaded from, for
   * a plugin written on the SDK (`core/sdk/load-modules.ts`); absent for a built-in.
   */
  module?: string;
  /** How long a hook of an SDK plugin may take (ms) before its request fails with `plugin_error` (`core/sdk/host.ts`). */
  hookTimeoutMs?: number;
}

export interface ServerSettings {
  host: string;
  port: number;
  maxBodyBytes: number;
  /** Body limits of single dialects (by dialect id), over `maxBodyBytes`. */
  maxBodyBytesByDialect: Record<string, number>;
  /** Bytes of request bodies read and parsed at once, process-wide (503 `bodies_in_flight_full` beyond). */
  maxBodyBytesInFlight: number;
  /** Of them, bytes one principal (a user; a client address before authentication) may hold (503 `bodies_in_flight_full` for it beyond). */
  maxBodyBytesInFlightPerUser: number;
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
  /** Single sign-on (`core/admin/oidc-routes.ts`); absent = password sign-in only. */
  oidc?: OidcSettings;
}

/** `admin.oidc` (manifest-schema.ts has each field's meaning), defaults filled in. */
export interface OidcSettings {
  issuer: string;
  name?: string;
  clientId: string;
  clientSecretEnv?: string;
  redirectUrl?: string;
  scopes: string[];
  allowedDomains?: string[];
  allowedGroups?: string[];
  roleClaim: string;
  roleMapping: { admin: string[]; viewer: string[]; teamAdmin: string[] };
  teamAdminPrefix: string;
  passwordLogin: boolean;
}

/** The self-service portal for gateway users (`/portal/`, docs/portal.md). */
export interface PortalSettings {
  enabled: boolean;
  /** Create a gateway user at sign-in when none has the email. */
  createUsers: boolean;
  sessionIdleMinutes: number;
  sessionMaxHours: number;
}

export interface Manifest {
  server: ServerSettings;
  admin: AdminSettings;
  portal: PortalSettings;
  upstream: UpstreamSettings;
  /** Where the data lives (`data-dir.ts` `openGatewayStore`). */
  store: StoreSettings;
  /** State shared by several replicas (`coordination/index.ts`). */
  coordination: CoordinationSettings;
  /** OpenTelemetry traces (`telemetry/tracing-settings.ts`); off unless an endpoint is set here or in the environment. */
  tracing: TracingSection;
  /** The ledger checked against the providers' reports (`reconcile/reconcile-job.ts`). */
  reconciliation: ReconciliationSettings;
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
    // A `false` subschema: a field the rest of its object rules out (its schema says which and why).
    case 'false schema':
      return 'must not be set with the other fields given';
    default:
      return e.message ?? 'is invalid';
  }
}

function ajvIssues(errors: ErrorObject[] | null | undefined, prefix: string): ManifestIssue[] {
  // An `if` adds 'must match "then" schema' beside the errors of its branch, which say what to fix.
  return collapseAlternatives((errors ?? []).filter((e) => e.keyword !== 'if')).map((e) => {
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
  /**
   * What loading the plugin modules the manifest names found (`core/sdk/load-modules.ts`): its issues
   * are reported with the others, and the entries whose module failed are not checked again.
   */
  loaded?: { issues: readonly ManifestIssue[]; failed: ReadonlySet<number> };
}

/** True for an IANA timezone this runtime knows (`UTC`, `Europe/Paris`); the schema format `time-zone`. */
export function isTimeZone(tz: string): boolean {
  return isValidTimeZone(tz);
}

/**
 * `server.maxBodyBytesInFlightPerUser` when the manifest leaves it out: a quarter of the process's
 * bytes in flight (four callers at their share fill it), yet at least the largest body one may send
 * (`bodyLimits`), so one maximal body always fits, and at most the process's.
 */
export function defaultMaxBodyBytesInFlightPerUser(maxBodyBytesInFlight: number, bodyLimits: readonly number[]): number {
  return Math.min(maxBodyBytesInFlight, Math.max(Math.floor(maxBodyBytesInFlight / 4), ...bodyLimits));
}

/**
 * Validates a parsed manifest against the registry. Returns the frozen manifest with defaults
 * filled in; throws `ManifestError` listing every problem.
 */
export function validateManifest(input: unknown, registry: PluginRegistry, options: ValidateOptions = {}): Manifest {
  const issues: ManifestIssue[] = [...(options.loaded?.issues ?? [])];
  const substituted = substituteEnv(structuredClone(input), options.env ?? process.env, issues);
  const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false });
  ajv.addFormat('time-zone', { type: 'string', validate: isTimeZone });
  if (!ajv.validate(manifestSchema, substituted)) issues.push(...ajvIssues(ajv.errors, ''));

  const server = (substituted as { server?: Partial<ServerSettings> }).server;
  if (server && typeof server.requestTimeoutMs === 'number' && typeof server.headersTimeoutMs === 'number' && server.requestTimeoutMs < server.headersTimeoutMs) {
    issues.push({ pointer: '/server/requestTimeoutMs', message: `must be >= headersTimeoutMs (${server.headersTimeoutMs}): the whole request includes its headers` });
  }

  if (server && typeof server.maxBodyBytesInFlight === 'number' && typeof server.maxBodyBytes === 'number') {
    server.maxBodyBytesInFlightPerUser ??= defaultMaxBodyBytesInFlightPerUser(server.maxBodyBytesInFlight, [server.maxBodyBytes, ...Object.values(server.maxBodyBytesByDialect ?? {})]);
  }

  issues.push(...oidcIssues((substituted as { admin?: { oidc?: Partial<OidcSettings> } }).admin?.oidc));

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
      if (options.loaded?.failed.has(i)) return;
      const name = (entry as { name?: unknown } | null)?.name;
      if (typeof name !== 'string') return;
      const factory = registry.get(name);
      if (!factory) {
        const module = (entry as { module?: unknown }).module;
        issues.push(typeof module === 'string'
          ? { pointer: `${PLUGINS_POINTER}/${i}/module`, message: `plugin modules are loaded only by \`tollgate serve\` and \`tollgate check\` (core/sdk/load-modules.ts); "${module}" was not` }
          : { pointer: `${PLUGINS_POINTER}/${i}/name`, message: `unknown plugin "${name}"; known plugins: ${[...registry.keys()].join(', ')}` });
        return;
      }
      if ((entry as { hookTimeoutMs?: unknown }).hookTimeoutMs !== undefined && !('sdk' in factory)) {
        issues.push({ pointer: `${PLUGINS_POINTER}/${i}/hookTimeoutMs`, message: `applies only to plugins written on the plugin SDK; "${name}" is part of the gateway` });
      }
      if (seen.has(name)) issues.push({ pointer: `${PLUGINS_POINTER}/${i}/name`, message: `plugin "${name}" is listed twice` });
      seen.add(name);
      if (factory.terminal) terminal.push(i);
      const e = entry as { config?: unknown };
      if (e.config === undefined) e.config = {};
      // A loaded plugin's problems name it: the entry has no name of its own to point at.
      const named = (message: string) => ('sdk' in factory ? `${message} (plugin "${name}")` : message);
      if (!ajv.validate(factory.configSchema, e.config)) {
        issues.push(...ajvIssues(ajv.errors, `${PLUGINS_POINTER}/${i}/config`).map((issue) => ({ pointer: issue.pointer, message: named(issue.message) })));
      } else for (const p of factory.checkConfig?.(e.config) ?? []) issues.push({ pointer: `${PLUGINS_POINTER}/${i}/config${p.pointer}`, message: named(p.message) });
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

/** Reads and parses a manifest file. Throws `ManifestError` for text that is not JSON, or a read error. */
export function readManifestFile(path: string): unknown {
  const text = readFileSync(path, 'utf8');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ManifestError(path, [{ pointer: '', message: `not valid JSON (${(err as Error).message})` }]);
  }
}

/**
 * Reads and validates a manifest file naming built-in plugins only (`cli/manifest-source.ts` loads one
 * with plugin modules). Throws `ManifestError` (with every problem) or a read error.
 */
export function loadManifestFile(path: string, registry: PluginRegistry, options: Omit<ValidateOptions, 'source'> = {}): Manifest {
  return validateManifest(readManifestFile(path), registry, { ...options, source: path });
}

/** What the schema cannot say of `admin.oidc`: plain http only on loopback, and openid among the scopes. */
function oidcIssues(oidc: Partial<OidcSettings> | undefined): ManifestIssue[] {
  if (!oidc || typeof oidc.issuer !== 'string') return [];
  const issues: ManifestIssue[] = [];
  for (const field of ['issuer', 'redirectUrl'] as const) {
    const value = oidc[field];
    if (typeof value !== 'string') continue;
    let url: URL | null = null;
    try {
      url = new URL(value);
    } catch {
      issues.push({ pointer: `/admin/oidc/${field}`, message: 'must be a URL' });
    }
    if (url && url.protocol === 'http:' && !['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) {
      issues.push({ pointer: `/admin/oidc/${field}`, message: 'must be https (plain http only on a loopback host, for local testing)' });
    }
  }
  if (Array.isArray(oidc.scopes) && !oidc.scopes.includes('openid')) issues.push({ pointer: '/admin/oidc/scopes', message: 'must include "openid"' });
  return issues;
}
