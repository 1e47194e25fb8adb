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
import type { AnswerRewrite, ProxyDeps, ResponseHooks } from './proxy/relay-types.ts';
import type { CanonicalRequest } from './canonical/canonical-request.ts';
import { mapCanonicalRequestText } from './canonical/text-map.ts';
import { proxyWithFallback } from './proxy/upstream-attempts.ts';
import { relayLocalAnswer } from './proxy/local-answer.ts';


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
 * One pipeline's hooks, computed once at boot from the plugins in manifest order, and what its runs
 * read besides. Passed to the module's functions (a record, not closures over the factory's locals:
 * each is a named function in stack traces and takes what it needs explicitly).
 */
interface Chain {
  readonly plugins: readonly AnyPlugin[];
  readonly deps: ProxyDeps;
  /** The terminal plugin's `route`, last in the chain. */
  readonly router: Step<NonNullable<AnyPlugin['route']>>;
  readonly onRequest: readonly Step<NonNullable<AnyPlugin['onRequest']>>[];
  /** Index of the first plugin that is not `headersOnly`: the body is read before its request hook. */
  readonly bodyAt: number;
  /** `beforeBody` hooks of the plugins from `bodyAt` on (a `headersOnly` plugin's would run after its onRequest). */
  readonly beforeBody: readonly Step<NonNullable<AnyPlugin['beforeBody']>>[];
  /** By plugin index: whether that plugin has a `beforeBody` hook in `beforeBody`. */
  readonly hasBeforeBody: readonly boolean[];
  readonly beforeUpstream: readonly Step<NonNullable<AnyPlugin['beforeUpstream']>>[];
  /** The response-path hooks, in reverse manifest order. */
  readonly onError: readonly Step<NonNullable<AnyPlugin['onError']>>[];
  readonly onResponseStart: readonly Step<NonNullable<AnyPlugin['onResponseStart']>>[];
  readonly onResponseChunk: readonly Step<NonNullable<AnyPlugin['onResponseChunk']>>[];
  readonly onResponseComplete: readonly Step<NonNullable<AnyPlugin['onResponseComplete']>>[];
  readonly onResponseEnd: readonly Step<NonNullable<AnyPlugin['onResponseEnd']>>[];
  readonly onAnswer: readonly Step<NonNullable<AnyPlugin['onAnswer']>>[];
  /** `rewriteRequestText` in manifest order, `rewriteAnswerText` in reverse. */
  readonly rewriteRequest: readonly Step<NonNullable<AnyPlugin['rewriteRequestText']>>[];
  readonly rewriteAnswer: readonly Step<NonNullable<AnyPlugin['rewriteAnswerText']>>[];
  /** By plugin index: its `createState`, bound; null when it keeps no state. */
  readonly createState: readonly (((ex: Exchange) => unknown) | null)[];
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
  const bodyAt = Math.max(0, plugins.findIndex((p) => !p.headersOnly));
  const beforeBody = stepsFor(plugins, 'beforeBody').filter((step) => step.index >= bodyAt);
  const chain: Chain = {
    plugins,
    deps,
    router: routers[0]!,
    onRequest: stepsFor(plugins, 'onRequest'),
    bodyAt,
    beforeBody,
    hasBeforeBody: plugins.map((_, index) => beforeBody.some((step) => step.index === index)),
    beforeUpstream: stepsFor(plugins, 'beforeUpstream'),
    onError: stepsFor(plugins, 'onError').reverse(),
    onResponseStart: stepsFor(plugins, 'onResponseStart').reverse(),
    onResponseChunk: stepsFor(plugins, 'onResponseChunk').reverse(),
    onResponseComplete: stepsFor(plugins, 'onResponseComplete').reverse(),
    onResponseEnd: stepsFor(plugins, 'onResponseEnd').reverse(),
    onAnswer: stepsFor(plugins, 'onAnswer').reverse(),
    rewriteRequest: stepsFor(plugins, 'rewriteRequestText'),
    rewriteAnswer: stepsFor(plugins, 'rewriteAnswerText').reverse(),
    createState: plugins.map((p) => (p.createState ? p.createState.bind(p) : null)),
  };
  // The response hooks of an exchange that entered every plugin (every proxied one): built once.
  // Traces that capture the answer's text need it whole too.
  const proxiedHooks = hooksFor(chain, plugins.length, 0, chain.onAnswer.length > 0 || deps.tracing?.wantsAnswer === true);
  return {
    run: (ex, res, loadBody) => runExchange(chain, proxiedHooks, ex, res, loadBody),
    close: () => closePlugins(plugins, deps),
    pluginNames: plugins.map((p) => p.name),
  };
}

/** The state of the plugin at `index` for `ex`, made by its `createState` on first use. */
function stateOf(chain: Chain, ex: Exchange, index: number): unknown {
  let state = ex.states[index];
  if (state === undefined) {
    const create = chain.createState[index];
    if (create) state = ex.states[index] = create(ex);
  }
  return state;
}

/**
 * Whether the plugin at `index` is entered: its request hook returned (`index < entered`), or its
 * `beforeBody` did (`index < heldBelow`, see core/plugin.ts).
 */
function isEntered(chain: Chain, index: number, entered: number, heldBelow: number): boolean {
  return index < entered || (index < heldBelow && chain.hasBeforeBody[index]!);
}

function runResponseStart(chain: Chain, ex: Exchange, entered: number, heldBelow: number): void {
  for (const step of chain.onResponseStart) if (isEntered(chain, step.index, entered, heldBelow)) step.fn(ex, stateOf(chain, ex, step.index));
}

function runResponseChunk(chain: Chain, ex: Exchange, chunk: ChatCompletionChunk, entered: number, heldBelow: number): void {
  for (const step of chain.onResponseChunk) if (isEntered(chain, step.index, entered, heldBelow)) step.fn(ex, stateOf(chain, ex, step.index), chunk);
}

/** The `onResponseComplete` hooks of the entered plugins; a failing one is logged, never thrown. */
async function runResponseComplete(chain: Chain, ex: Exchange, final: unknown, entered: number, heldBelow: number): Promise<void> {
  for (const step of chain.onResponseComplete) {
    if (!isEntered(chain, step.index, entered, heldBelow)) continue;
    try {
      await step.fn(ex, stateOf(chain, ex, step.index), final);
    } catch (err) {
      chain.deps.log.error('onResponseComplete hook failed', { requestId: ex.id, plugin: chain.plugins[step.index]!.name, err });
    }
  }
}

/**
 * An answer given before the body was read (a stranger's 401, a rate-limit 429) closes the
 * connection: draining the rest of an unread body (up to 32 MiB) for keep-alive would make the
 * gateway read what it refused to.
 */
function closingIf(bodyUnread: boolean, headers: Record<string, string>): Record<string, string> {
  return bodyUnread ? Object.assign({}, headers, { connection: 'close' }) : headers;
}

/** Ends `ex` with `err`: the entered plugins' `onError`, then (before headers) their `onResponseStart` and the error body. */
function fail(chain: Chain, ex: Exchange, res: ServerResponse, err: unknown, entered: number, bodyUnread: boolean, heldBelow: number): void {
  const { log } = chain.deps;
  const error = toGatewayError(err);
  if (error.code === 'internal_error') log.error('request failed', { requestId: ex.id, err: error.cause ?? err });
  ex.status = error.status;
  ex.errorCode = error.code;
  for (const step of chain.onError) {
    if (!isEntered(chain, step.index, entered, heldBelow)) continue;
    try {
      step.fn(ex, stateOf(chain, ex, step.index), error);
    } catch (hookErr) {
      log.error('onError hook failed', { requestId: ex.id, plugin: chain.plugins[step.index]!.name, err: hookErr });
    }
  }
  if (res.headersSent) return;
  try {
    runResponseStart(chain, ex, entered, heldBelow);
  } catch (hookErr) {
    log.error('onResponseStart hook failed', { requestId: ex.id, err: hookErr });
  }
  sendError(res, error, ex.id, closingIf(bodyUnread, ex.responseHeaders), ex.dialect?.errorBody);
}

/**
 * Answers `ex` with a plugin's local reply, after the entered plugins' `onResponseStart`: a JSON body,
 * or a canonical chat answer rendered in the client's dialect (`Reply.answer`, `local-answer.ts`).
 */
async function answer(chain: Chain, ex: Exchange, res: ServerResponse, r: Reply, entered: number, bodyUnread: boolean, heldBelow = 0): Promise<void> {
  if (r.answer && ex.dialect) {
    await relayLocalAnswer(ex, r.answer, res, hooksFor(chain, entered, heldBelow, false), r.headers);
    return;
  }
  ex.status = r.status;
  runResponseStart(chain, ex, entered, heldBelow);
  sendJson(res, r.status, r.body, ex.id, closingIf(bodyUnread, ex.responseHeaders), r.headers);
}

/** The response hooks of the plugins entered (`isEntered`), for a relay to call. */
function hooksFor(chain: Chain, entered: number, heldBelow: number, wantsAnswer: boolean): ResponseHooks {
  return {
    start: (ex) => runResponseStart(chain, ex, entered, heldBelow),
    chunk: (ex, chunk) => runResponseChunk(chain, ex, chunk, entered, heldBelow),
    complete: (ex, final) => runResponseComplete(chain, ex, final, entered, heldBelow),
    wantsAnswer,
    rewrite: answerRewrite(chain, entered, heldBelow),
  };
}

/** The entered plugins' `rewriteAnswerText` composed (reverse manifest order), or null when none has one. */
function answerRewrite(chain: Chain, entered: number, heldBelow: number): AnswerRewrite | null {
  const steps = chain.rewriteAnswer.filter((step) => isEntered(chain, step.index, entered, heldBelow));
  if (steps.length === 0) return null;
  return (ex, text, end, choiceIndex) => {
    let out = text;
    for (const step of steps) out = step.fn(ex, stateOf(chain, ex, step.index), out, end, choiceIndex);
    return out;
  };
}

/**
 * The `rewriteRequestText` hooks, in manifest order, over the canonical request and the client's own
 * body (the same object for a dialect whose body is the canonical request). The route is not chosen
 * yet, so both forms are rewritten; each distinct text goes through a hook once (the second form's
 * texts are the first's), so a hook that counts or calls out sees every text once.
 */
function rewriteRequest(chain: Chain, ex: Exchange): void {
  const { dialect } = ex;
  for (const step of chain.rewriteRequest) {
    const { request, clientBody } = ex;
    if (request === null) return;
    const rewritten = new Map<string, string>();
    const fn = (text: string): string => {
      let out = rewritten.get(text);
      if (out === undefined) rewritten.set(text, (out = step.fn(ex, stateOf(chain, ex, step.index), text)));
      return out;
    };
    if (clientBody !== null && (clientBody as unknown) === request && dialect) {
      const next = dialect.mapRequestText(clientBody, fn);
      ex.request = next as unknown as CanonicalRequest;
      ex.clientBody = next;
      continue;
    }
    ex.request = mapCanonicalRequestText(request, fn);
    if (clientBody !== null && dialect) ex.clientBody = dialect.mapRequestText(clientBody, fn);
  }
}

/** The entered plugins' `onResponseEnd`, exactly once per exchange; a client that left is a 499. */
async function end(chain: Chain, ex: Exchange, entered: number, heldBelow: number): Promise<void> {
  if (ex.clientAborted && ex.errorCode === null) {
    ex.status = 499;
    ex.errorCode = 'client_disconnected';
  }
  // A whole answer first: a cache stores it before the request's slots (concurrency) are given back.
  const whole = ex.answer;
  if (whole && ex.status === 200 && ex.errorCode === null && !ex.clientAborted) {
    for (const step of chain.onAnswer) {
      if (!isEntered(chain, step.index, entered, heldBelow)) continue;
      try {
        const done = step.fn(ex, stateOf(chain, ex, step.index), whole);
        if (isPromise(done)) await done;
      } catch (err) {
        chain.deps.log.error('onAnswer hook failed', { requestId: ex.id, plugin: chain.plugins[step.index]!.name, err });
      }
    }
  }
  for (const step of chain.onResponseEnd) {
    if (!isEntered(chain, step.index, entered, heldBelow)) continue;
    try {
      const done = step.fn(ex, stateOf(chain, ex, step.index));
      if (isPromise(done)) await done;
    } catch (err) {
      chain.deps.log.error('onResponseEnd hook failed', { requestId: ex.id, plugin: chain.plugins[step.index]!.name, err });
    }
  }
}

/** `Pipeline.run`: the request hooks (reading the body when first needed), the route, `beforeUpstream`, the proxy, `end`. */
async function runExchange(chain: Chain, proxiedHooks: ResponseHooks, ex: Exchange, res: ServerResponse, loadBody?: () => Promise<void>): Promise<void> {
  const { bodyAt, beforeBody, onRequest, router } = chain;
  let entered = 0;
  /** Plugins below this index whose `beforeBody` returned are entered too. */
  let heldBelow = 0;
  // The body is read once, when the first plugin that may need it is reached or after the last
  // request hook (the loop's extra turn), after the `beforeBody` hooks. Inline, not a helper: a
  // closure and a promise fewer per request.
  let pendingBody = loadBody;
  // Off (no tracer), this null check is all tracing costs a request.
  const trace = chain.deps.tracing ? chain.deps.tracing.begin(ex) : null;
  try {
    for (let i = 0; i <= onRequest.length; i++) {
      const step = onRequest[i];
      if (pendingBody && (step === undefined || step.index >= bodyAt)) {
        entered = bodyAt;
        for (const hold of beforeBody) {
          const held = hold.fn(ex, stateOf(chain, ex, hold.index));
          if (isPromise(held)) await held;
          heldBelow = hold.index + 1;
        }
        const load = pendingBody;
        pendingBody = undefined;
        await load();
      }
      if (step === undefined) break;
      entered = step.index;
      const returned = step.fn(ex, stateOf(chain, ex, step.index));
      const result = isPromise(returned) ? await returned : returned;
      if (isReply(result)) {
        entered = step.index + 1;
        await answer(chain, ex, res, result, entered, pendingBody !== undefined, heldBelow);
        return;
      }
    }
    entered = router.index;
    if (ex.refusal) throw ex.refusal;
    if (chain.rewriteRequest.length > 0) rewriteRequest(chain, ex);
    const routing = router.fn(ex, stateOf(chain, ex, router.index));
    const routed: ModelCall | Reply = isPromise(routing) ? await routing : routing;
    entered = chain.plugins.length;
    if (isReply(routed)) {
      await answer(chain, ex, res, routed, entered, false);
      return;
    }
    // The router's fallback plan stays with the request even when a hook replaces the call (an output cap).
    const fallback = routed.fallback ?? null;
    let call = routed;
    for (const step of chain.beforeUpstream) {
      const returned = step.fn(ex, stateOf(chain, ex, step.index), call);
      call = (isPromise(returned) ? await returned : returned) ?? call;
    }
    await proxyWithFallback(ex, call, fallback, res, proxiedHooks, chain.deps, trace);
  } catch (err) {
    if (ex.clientAborted) return;
    fail(chain, ex, res, err, entered, pendingBody !== undefined, heldBelow);
  } finally {
    await end(chain, ex, entered, heldBelow);
    // After the response hooks: pricing set the cost, the logger took the row the span must agree with.
    trace?.end(ex);
  }
}

/** `Pipeline.close`: every plugin's `close`, in reverse manifest order; a failing one is logged. */
async function closePlugins(plugins: readonly AnyPlugin[], deps: ProxyDeps): Promise<void> {
  for (const plugin of [...plugins].reverse()) {
    try {
      await plugin.close?.();
    } catch (err) {
      deps.log.error('plugin close failed', { plugin: plugin.name, err });
    }
  }
}
