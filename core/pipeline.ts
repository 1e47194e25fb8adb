/**
 * The pipeline runner: runs the plugins' hooks for one exchange following the rules in
 * `core/plugin.ts`. Hook arrays are computed once at boot, so per request the runner only walks
 * arrays of the hooks that exist.
 */
import type { ServerResponse } from 'node:http';
import type { Exchange } from './exchange.ts';
import type { Plugin, Reply } from './plugin.ts';
import type { ChatCompletionChunk } from './canonical/chat-types.ts';
import type { ModelCall } from './upstream/upstream-call.ts';
import { toGatewayError } from './errors.ts';
import { sendError, sendJson } from './http/respond.ts';
import type { ProxyDeps, ResponseHooks } from './proxy/relay-types.ts';
import { proxyWithFallback } from './proxy/upstream-attempts.ts';


/**
 * Most hooks are synchronous: awaiting only real promises spares each request a microtask per hook
 * (about twenty).
 */
function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}

export interface Pipeline {
  /**
   * Runs one exchange to completion: request phases, dispatch, response phases. Never throws.
   * `loadBody` reads and parses the request body into `ex`; it runs once the leading `headersOnly`
   * plugins (authentication) passed, and a failure there (400, 413) ends the exchange like a denial.
   */
  run(ex: Exchange, res: ServerResponse, loadBody?: () => Promise<void>): Promise<void>;
  /** Closes every plugin, in reverse manifest order. */
  close(): Promise<void>;
  readonly pluginNames: readonly string[];
}

interface Step<F> {
  index: number;
  fn: F;
}

type AnyPlugin = Plugin<unknown>;

function stepsFor<K extends keyof AnyPlugin>(plugins: readonly AnyPlugin[], phase: K): Step<NonNullable<AnyPlugin[K]>>[] {
  const steps: Step<NonNullable<AnyPlugin[K]>>[] = [];
  plugins.forEach((plugin, index) => {
    const hook = plugin[phase];
    if (typeof hook === 'function') steps.push({ index, fn: hook.bind(plugin) as NonNullable<AnyPlugin[K]> });
  });
  return steps;
}

function isReply(value: unknown): value is Reply {
  return typeof value === 'object' && value !== null && (value as Reply).kind === 'reply';
}

/**
 * Builds the runner. `plugins` are in manifest order; exactly one implements `route` and it must be
 * last (the manifest loader enforces both, this re-checks).
 */
export function createPipeline(plugins: readonly AnyPlugin[], deps: ProxyDeps): Pipeline {
  const routers = stepsFor(plugins, 'route');
  if (routers.length !== 1 || routers[0]!.index !== plugins.length - 1) {
    throw new Error('pipeline: exactly one plugin must implement route(), and it must be the last one');
  }
  const router = routers[0]!;
  const onRequest = stepsFor(plugins, 'onRequest');
  const bodyAt = Math.max(0, plugins.findIndex((p) => !p.headersOnly));
  /** `beforeBody` hooks of the plugins from `bodyAt` on (a `headersOnly` plugin's would run after its onRequest). */
  const beforeBody = stepsFor(plugins, 'beforeBody').filter((step) => step.index >= bodyAt);
  const hasBeforeBody = plugins.map((_, index) => beforeBody.some((step) => step.index === index));
  const beforeUpstream = stepsFor(plugins, 'beforeUpstream');
  const onError = stepsFor(plugins, 'onError').reverse();
  const onResponseStart = stepsFor(plugins, 'onResponseStart').reverse();
  const onResponseChunk = stepsFor(plugins, 'onResponseChunk').reverse();
  const onResponseComplete = stepsFor(plugins, 'onResponseComplete').reverse();
  const onResponseEnd = stepsFor(plugins, 'onResponseEnd').reverse();
  const createState = plugins.map((p) => (p.createState ? p.createState.bind(p) : null));

  function stateOf(ex: Exchange, index: number): unknown {
    let state = ex.states[index];
    if (state === undefined) {
      const create = createState[index];
      if (create) state = ex.states[index] = create(ex);
    }
    return state;
  }

  /**
   * Whether the plugin at `index` is entered: its request hook returned (`index < entered`), or its
   * `beforeBody` did (`index < heldBelow`, see core/plugin.ts).
   */
  function isEntered(index: number, entered: number, heldBelow: number): boolean {
    return index < entered || (index < heldBelow && hasBeforeBody[index]!);
  }

  function responseHooks(entered: number, heldBelow = 0): ResponseHooks {
    return {
      start(ex) {
        for (const step of onResponseStart) if (isEntered(step.index, entered, heldBelow)) step.fn(ex, stateOf(ex, step.index));
      },
      chunk(ex, chunk: ChatCompletionChunk) {
        for (const step of onResponseChunk) if (isEntered(step.index, entered, heldBelow)) step.fn(ex, stateOf(ex, step.index), chunk);
      },
      async complete(ex, final: unknown) {
        for (const step of onResponseComplete) {
          if (!isEntered(step.index, entered, heldBelow)) continue;
          try {
            await step.fn(ex, stateOf(ex, step.index), final);
          } catch (err) {
            deps.log.error('onResponseComplete hook failed', { requestId: ex.id, plugin: plugins[step.index]!.name, err });
          }
        }
      },
    };
  }

  /**
   * An answer given before the body was read (a stranger's 401, a rate-limit 429) closes the
   * connection: draining the rest of an unread body (up to 32 MiB) for keep-alive would make the
   * gateway read what it refused to.
   */
  function closingIf(bodyUnread: boolean, headers: Record<string, string>): Record<string, string> {
    return bodyUnread ? Object.assign({}, headers, { connection: 'close' }) : headers;
  }

  /** The hooks of an exchange that entered every plugin (the proxied ones): built once. */
  const allResponseHooks = responseHooks(plugins.length);

  function fail(ex: Exchange, res: ServerResponse, err: unknown, entered: number, bodyUnread: boolean, heldBelow: number): void {
    const error = toGatewayError(err);
    if (error.code === 'internal_error') deps.log.error('request failed', { requestId: ex.id, err: error.cause ?? err });
    ex.status = error.status;
    ex.errorCode = error.code;
    for (const step of onError) {
      if (!isEntered(step.index, entered, heldBelow)) continue;
      try {
        step.fn(ex, stateOf(ex, step.index), error);
      } catch (hookErr) {
        deps.log.error('onError hook failed', { requestId: ex.id, plugin: plugins[step.index]!.name, err: hookErr });
      }
    }
    if (res.headersSent) return;
    try {
      responseHooks(entered, heldBelow).start(ex);
    } catch (hookErr) {
      deps.log.error('onResponseStart hook failed', { requestId: ex.id, err: hookErr });
    }
    sendError(res, error, ex.id, closingIf(bodyUnread, ex.responseHeaders), ex.dialect?.errorBody);
  }

  function answer(ex: Exchange, res: ServerResponse, r: Reply, entered: number, bodyUnread: boolean, heldBelow = 0): void {
    ex.status = r.status;
    responseHooks(entered, heldBelow).start(ex);
    sendJson(res, r.status, r.body, ex.id, closingIf(bodyUnread, ex.responseHeaders), r.headers);
  }

  async function end(ex: Exchange, entered: number, heldBelow: number): Promise<void> {
    if (ex.clientAborted && ex.errorCode === null) {
      ex.status = 499;
      ex.errorCode = 'client_disconnected';
    }
    for (const step of onResponseEnd) {
      if (!isEntered(step.index, entered, heldBelow)) continue;
      try {
        const done = step.fn(ex, stateOf(ex, step.index));
        if (isPromise(done)) await done;
      } catch (err) {
        deps.log.error('onResponseEnd hook failed', { requestId: ex.id, plugin: plugins[step.index]!.name, err });
      }
    }
  }

  async function run(ex: Exchange, res: ServerResponse, loadBody?: () => Promise<void>): Promise<void> {
    let entered = 0;
    /** Plugins below this index whose `beforeBody` returned are entered too. */
    let heldBelow = 0;
    // The body is read once, when the first plugin that may need it is reached (inline, not a helper:
    // a closure and a promise fewer per request), after the `beforeBody` hooks.
    let pendingBody = loadBody;
    try {
      for (const step of onRequest) {
        if (pendingBody && step.index >= bodyAt) {
          entered = bodyAt;
          for (const hold of beforeBody) {
            const held = hold.fn(ex, stateOf(ex, hold.index));
            if (isPromise(held)) await held;
            heldBelow = hold.index + 1;
          }
          const load = pendingBody;
          pendingBody = undefined;
          await load();
        }
        entered = step.index;
        const returned = step.fn(ex, stateOf(ex, step.index));
        const result = isPromise(returned) ? await returned : returned;
        if (isReply(result)) {
          entered = step.index + 1;
          answer(ex, res, result, entered, pendingBody !== undefined, heldBelow);
          return;
        }
      }
      if (pendingBody) {
        entered = bodyAt;
        for (const hold of beforeBody) {
          const held = hold.fn(ex, stateOf(ex, hold.index));
          if (isPromise(held)) await held;
          heldBelow = hold.index + 1;
        }
        const load = pendingBody;
        pendingBody = undefined;
        await load();
      }
      entered = router.index;
      if (ex.refusal) throw ex.refusal;
      const routing = router.fn(ex, stateOf(ex, router.index));
      const routed: ModelCall | Reply = isPromise(routing) ? await routing : routing;
      entered = plugins.length;
      if (isReply(routed)) {
        answer(ex, res, routed, entered, false);
        return;
      }
      // The router's fallback plan stays with the request even when a hook replaces the call (an output cap).
      const fallback = routed.fallback ?? null;
      let call = routed;
      for (const step of beforeUpstream) {
        const returned = step.fn(ex, stateOf(ex, step.index), call);
        call = (isPromise(returned) ? await returned : returned) ?? call;
      }
      await proxyWithFallback(ex, call, fallback, res, allResponseHooks, deps);
    } catch (err) {
      if (ex.clientAborted) return;
      fail(ex, res, err, entered, pendingBody !== undefined, heldBelow);
    } finally {
      await end(ex, entered, heldBelow);
    }
  }

  async function close(): Promise<void> {
    for (const plugin of [...plugins].reverse()) {
      try {
        await plugin.close?.();
      } catch (err) {
        deps.log.error('plugin close failed', { plugin: plugin.name, err });
      }
    }
  }

  return { run, close, pluginNames: plugins.map((p) => p.name) };
}
