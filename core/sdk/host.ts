/**
 * The gateway's side of the plugin SDK: turns a plugin written on `tollgate/plugin` (a `DefinedPlugin`)
 * into the pipeline's own `PluginFactory`, and keeps the gateway safe from it (`docs/plugins.md`
 * "Isolation"):
 * - a request hook (`beforeBody`, `onRequest`, `createState`) that throws or rejects with anything
 *   but a `gatewayError` fails its request with 500 `plugin_error` naming the plugin and hook (the
 *   error itself goes to the server log, never to the client), and the log row names the plugin
 *   (`error_plugin`);
 * - a hook whose promise is not settled within the entry's `hookTimeoutMs` fails the same way; what
 *   it was doing goes on in the background, its outcome ignored;
 * - a response hook that fails is logged and counted: the answer is the client's already;
 * - every hook's time is observed in `tollgate_plugin_hook_seconds{plugin,hook}` and every failure
 *   counted in `tollgate_plugin_errors_total{plugin,hook,reason}`.
 * A synchronous hook that never returns cannot be stopped from here (JavaScript has one thread); the
 * guide says so.
 *
 * The gateway's built-in plugins are not wrapped: they are part of the gateway, and the timing costs
 * ~2 clock reads a hook.
 */
import { performance } from 'node:perf_hooks';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { gatewayError as catalogError, GatewayError } from '../errors.ts';
import type { Exchange as InternalExchange } from '../exchange.ts';
import type { Plugin as InternalPlugin, PluginContext as InternalContext, PluginFactory } from '../plugin.ts';
import type { Log } from '../runtime/log.ts';
import type { DefinedPlugin, Exchange, GatewayErrorLike, KvOptions, MetricSpec, Plugin, PluginContext, PluginKv, PluginMetrics, StreamChunk } from './types.ts';
import { createPluginKv } from './kv.ts';

// The internal objects are handed to plugins as they are: these fail to compile when a view stops fitting.
const exchangeView = (ex: InternalExchange): Exchange => ex;
const errorView = (err: GatewayError): GatewayErrorLike => err;
void exchangeView;
void errorView;

/** How long a hook's promise may take when the manifest entry does not say (`hookTimeoutMs`). */
export const DEFAULT_HOOK_TIMEOUT_MS = 5_000;

/** Where a plugin came from, for `tollgate plugins list` and the log. */
export interface PluginOrigin {
  /** `built-in` (part of the gateway), `module` (a file or package the manifest named). */
  kind: 'built-in' | 'module';
  /** The manifest's `module` as written; null for a built-in. */
  specifier: string | null;
  /** The file it was loaded from (absolute); null for a built-in. */
  path: string | null;
}

/** A `PluginFactory` made from an SDK plugin: it knows where it came from and its version. */
export interface SdkPluginFactory extends PluginFactory {
  readonly sdk: { readonly version: string | null; readonly origin: PluginOrigin };
}

/** True for a factory made by `hostPlugin` (an SDK plugin), whose entries may set `hookTimeoutMs`. */
export function isSdkPlugin(factory: PluginFactory): factory is SdkPluginFactory {
  return (factory as Partial<SdkPluginFactory>).sdk !== undefined;
}

/** The plugin hook metrics of one registry, made on first use (every SDK plugin shares them). */
interface HookMetrics {
  seconds: Histogram<'plugin' | 'hook'>;
  errors: Counter<'plugin' | 'hook' | 'reason'>;
}

const metricsByRegistry = new WeakMap<Registry, HookMetrics>();

function hookMetrics(registry: Registry): HookMetrics {
  let metrics = metricsByRegistry.get(registry);
  if (!metrics) {
    metrics = {
      seconds: new Histogram({
        name: 'tollgate_plugin_hook_seconds', help: 'Time spent in each hook of the plugins written on the plugin SDK (a promise: until it settled), seconds.',
        labelNames: ['plugin', 'hook'], buckets: [0.00001, 0.00005, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5], registers: [registry],
      }),
      errors: new Counter({
        name: 'tollgate_plugin_errors_total', help: 'Hooks of SDK plugins that failed: reason "threw" (threw or rejected) or "timeout" (over hookTimeoutMs).',
        labelNames: ['plugin', 'hook', 'reason'], registers: [registry],
      }),
    };
    metricsByRegistry.set(registry, metrics);
  }
  return metrics;
}

/** One hosted plugin's failure handling, shared by its wrapped hooks. */
class Guard {
  private readonly timing: HookMetrics;
  constructor(readonly name: string, readonly timeoutMs: number, readonly log: Log, registry: Registry) {
    this.timing = hookMetrics(registry);
  }

  /** The histogram's child per hook, made once: `observe` with a labels object hashes them on every call. */
  private readonly hookSeconds = new Map<string, { observe(value: number): void }>();

  observe(hook: string, startedAt: number): void {
    let child = this.hookSeconds.get(hook);
    if (!child) this.hookSeconds.set(hook, (child = this.timing.seconds.labels(this.name, hook)));
    child.observe((performance.now() - startedAt) / 1000);
  }

  /** The 500 a request gets for this plugin's failure; `ex` is marked for the log row. */
  failure(ex: InternalExchange, hook: string, reason: 'threw' | 'timeout', err?: unknown): GatewayError {
    this.timing.errors.inc({ plugin: this.name, hook, reason });
    ex.errorPlugin = this.name;
    const what = reason === 'timeout' ? `took longer than its hookTimeoutMs (${this.timeoutMs} ms)` : 'failed';
    this.log.error(`plugin ${what}`, { requestId: ex.id, plugin: this.name, hook, ...(err === undefined ? {} : { err }) });
    return catalogError('plugin_error', { message: `The plugin "${this.name}" ${what} in ${hook}; the request was not served. It has been logged; quote the x-request-id if you report it.`, cause: err });
  }

  /** A response-path failure: logged and counted; the answer goes on. */
  swallow(ex: InternalExchange, hook: string, reason: 'threw' | 'timeout', err?: unknown): void {
    this.timing.errors.inc({ plugin: this.name, hook, reason });
    this.log.error(reason === 'timeout' ? `plugin hook took longer than its hookTimeoutMs (${this.timeoutMs} ms)` : 'plugin hook failed', {
      requestId: ex.id, plugin: this.name, hook, ...(err === undefined ? {} : { err }),
    });
  }

  /**
   * Runs a request hook: a `gatewayError` passes as the plugin's answer, anything else thrown, a
   * rejection or an overrun becomes `plugin_error`. Synchronous when the hook is.
   */
  request<T>(ex: InternalExchange, hook: string, run: () => T | Promise<T>): T | Promise<T> {
    const startedAt = performance.now();
    let result: T | Promise<T>;
    try {
      result = run();
    } catch (err) {
      this.observe(hook, startedAt);
      throw err instanceof GatewayError ? err : this.failure(ex, hook, 'threw', err);
    }
    if (!(result instanceof Promise)) {
      this.observe(hook, startedAt);
      return result;
    }
    return this.settle(result, hook, startedAt, (reason, err) => {
      throw reason === 'threw' && err instanceof GatewayError ? err : this.failure(ex, hook, reason, err);
    });
  }

  /**
   * Runs a synchronous hook whose result the request needs (a text rewrite): as `request`, and a
   * promise returned is the plugin's failure.
   */
  sync<T>(ex: InternalExchange, hook: string, run: () => T): T {
    const result = this.request(ex, hook, run);
    if (result instanceof Promise) {
      result.catch(() => undefined);
      throw this.failure(ex, hook, 'threw', new TypeError(`${hook} must return a string, not a promise`));
    }
    return result;
  }

  /** Runs a response hook: any failure is swallowed (logged, counted). */
  response(ex: InternalExchange, hook: string, run: () => void | Promise<void>): void | Promise<void> {
    const startedAt = performance.now();
    let result: void | Promise<void>;
    try {
      result = run();
    } catch (err) {
      this.observe(hook, startedAt);
      this.swallow(ex, hook, 'threw', err);
      return;
    }
    if (!(result instanceof Promise)) {
      this.observe(hook, startedAt);
      return;
    }
    return this.settle(result, hook, startedAt, (reason, err) => this.swallow(ex, hook, reason, err));
  }

  /** `promise`, or `onFailure`'s outcome when it rejects or overruns the time budget. */
  private settle<T>(promise: Promise<T>, hook: string, startedAt: number, onFailure: (reason: 'threw' | 'timeout', err?: unknown) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let done = false;
      const finish = (outcome: () => T) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        this.observe(hook, startedAt);
        try {
          resolve(outcome());
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      };
      const timer = setTimeout(() => finish(() => onFailure('timeout')), this.timeoutMs);
      promise.then((value) => finish(() => value), (err: unknown) => finish(() => onFailure('threw', err)));
    });
  }
}

/** Prometheus metrics of one plugin, every name under `tollgate_plugin_<name>_`. */
function pluginMetrics(name: string, registry: Registry): PluginMetrics {
  const prefix = `tollgate_plugin_${name.replace(/-/g, '_')}_`;
  const common = (spec: MetricSpec) => ({ name: prefix + spec.name, help: spec.help, labelNames: [...(spec.labelNames ?? [])], registers: [registry] });
  return {
    counter(spec) {
      const metric = new Counter(common(spec));
      return { inc: (labels, value) => (labels === undefined ? metric.inc(value ?? 1) : metric.inc(labels, value ?? 1)) };
    },
    histogram(spec) {
      const metric = new Histogram({ ...common(spec), ...(spec.buckets ? { buckets: [...spec.buckets] } : {}) });
      return { observe: (labels, value) => metric.observe(labels, value) };
    },
    gauge(spec) {
      const metric = new Gauge(common(spec));
      return { set: (labels, value) => metric.set(labels, value) };
    },
  };
}

/** The log a plugin writes to: the gateway's, every line naming the plugin. */
function pluginLog(name: string, log: Log) {
  const withName = (fields?: Record<string, unknown>) => Object.assign({ plugin: name }, fields);
  return {
    debug: (message: string, fields?: Record<string, unknown>) => log.debug(message, withName(fields)),
    info: (message: string, fields?: Record<string, unknown>) => log.info(message, withName(fields)),
    warn: (message: string, fields?: Record<string, unknown>) => log.warn(message, withName(fields)),
    error: (message: string, fields?: Record<string, unknown>) => log.error(message, withName(fields)),
  };
}

/** The SDK's `PluginContext` of plugin `name`, from the gateway's own. */
function publicContext(name: string, ctx: InternalContext): PluginContext {
  let store: PluginKv | null = null;
  return Object.freeze({
    name, log: pluginLog(name, ctx.log), clock: ctx.clock, metrics: pluginMetrics(name, ctx.metrics), dataDir: ctx.dataDir,
    kv: (options?: KvOptions) => (store ??= createPluginKv(name, ctx.pluginKv, options)),
  });
}

/** The pipeline's plugin for an SDK plugin instance: each hook it has, wrapped by `guard`. */
function wrapInstance(name: string, instance: Plugin<unknown>, guard: Guard): InternalPlugin<unknown> {
  const plugin: InternalPlugin<unknown> = { name };
  // Each hook is called on `instance`, as its author wrote it (a class's methods keep their `this`).
  if (instance.createState) plugin.createState = (ex) => guard.request(ex, 'createState', () => instance.createState!(ex));
  if (instance.beforeBody) plugin.beforeBody = (ex, state) => guard.request(ex, 'beforeBody', () => instance.beforeBody!(ex, state));
  if (instance.onRequest) plugin.onRequest = (ex, state) => guard.request(ex, 'onRequest', () => instance.onRequest!(ex, state));
  if (instance.onError) plugin.onError = (ex, state, error) => void guard.response(ex, 'onError', () => instance.onError!(ex, state, error));
  if (instance.onResponseStart) plugin.onResponseStart = (ex, state) => void guard.response(ex, 'onResponseStart', () => instance.onResponseStart!(ex, state));
  if (instance.onResponseChunk) {
    plugin.onResponseChunk = (ex, state, chunk: StreamChunk) => void guard.response(ex, 'onResponseChunk', () => instance.onResponseChunk!(ex, state, chunk));
  }
  if (instance.onResponseEnd) plugin.onResponseEnd = (ex, state) => guard.response(ex, 'onResponseEnd', () => instance.onResponseEnd!(ex, state));
  if (instance.rewriteRequestText) {
    plugin.rewriteRequestText = (ex, state, text) => guard.sync(ex, 'rewriteRequestText', () => checkText(instance.rewriteRequestText!(ex, state, text)));
  }
  if (instance.rewriteAnswerText) {
    plugin.rewriteAnswerText = (ex, state, text, end, choiceIndex) => guard.sync(ex, 'rewriteAnswerText', () => checkText(instance.rewriteAnswerText!(ex, state, text, end, choiceIndex)));
  }
  if (instance.onAnswer) plugin.onAnswer = (ex, state, answer) => guard.response(ex, 'onAnswer', () => instance.onAnswer!(ex, state, answer));
  if (instance.close) plugin.close = () => instance.close!();
  return plugin;
}

/** A rewrite hook's result: a string, or the plugin's failure. */
function checkText(value: unknown): string {
  if (typeof value !== 'string') throw new TypeError(`a text rewrite must return a string, got ${value === null ? 'null' : typeof value}`);
  return value;
}

/**
 * The pipeline's factory for SDK plugin `definition`, loaded from `origin`. Its instances run behind
 * the isolation above, with the manifest entry's `hookTimeoutMs` (default `DEFAULT_HOOK_TIMEOUT_MS`).
 */
export function hostPlugin(definition: DefinedPlugin<never, unknown>, origin: PluginOrigin): SdkPluginFactory {
  const { name, description, configSchema, order, checkConfig } = definition;
  return {
    name, description, configSchema,
    ...(order ? { order } : {}),
    ...(checkConfig ? { checkConfig: (config: unknown) => checkConfig(config as never) } : {}),
    sdk: { version: definition.version ?? null, origin },
    async create(config, ctx, entry) {
      const guard = new Guard(name, entry?.hookTimeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS, ctx.log, ctx.metrics);
      const instance = await definition.create(config as never, publicContext(name, ctx));
      if (typeof instance !== 'object' || instance === null) throw new TypeError(`plugin "${name}": create() must return an object of hooks, got ${instance === null ? 'null' : typeof instance}`);
      return wrapInstance(name, instance, guard);
    },
  };
}
