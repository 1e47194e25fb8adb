/**
 * provider-router: the terminal plugin. Resolves the request's `model` to a model group's deployments
 * (`model-groups.ts`) or to one provider and upstream model (`resolve-model.ts`), checks the key's
 * allow-list (`model-allow-list.ts`), leaves out deployments whose circuit breaker is open, picks the
 * credential (the user's own, else the deployment's, else a key of the provider's pool, else the
 * shared one: `user-credentials.ts`, `key-pool.ts`), sets `ex.target` and returns the provider's
 * `UpstreamCall` with the plan for further attempts (`fallback-plan.ts`, `retry-policy.ts`). Every
 * attempt's outcome goes to `upstream-health.ts` (breakers, key pools, the admin page). It also answers
 * the model and provider endpoints from the discovered catalog (`catalog.ts`, persisted by core
 * `model-catalog-store.ts`): `GET /api/v1/models`, `GET /api/models`, `GET /api/providers/{provider}`.
 */
import type { Plugin, PluginContext, Reply } from '../../core/plugin.ts';
import { definePlugin } from '../../core/plugin.ts';
import { providerRouterRoutes } from './routes.ts';
import { upstreamCallFor } from './routing/upstream-call-for.ts';
import { isTokenCountOperation } from '../../core/dialects/index.ts';
import { reply } from '../../core/plugin.ts';
import type { Exchange } from '../../core/exchange.ts';
import { modelNotFound, providerNotConfigured, providerNotFound, routeNotFound, upstreamUnavailable, type GatewayError } from '../../core/errors.ts';
import type { CatalogEntry, Provider, ProviderSettings } from './providers/base.ts';
import { providerTypes } from './providers/index.ts';
import { createCatalog, createUserCatalog, type Catalog } from './catalog.ts';
import { loadPersistedCatalog, persistCatalog } from '../../core/catalog/model-catalog-store.ts';
import { resolveModel } from './routing/resolve-model.ts';
import { createCredentialResolver } from './user-credentials.ts';
import { modelCatalog, openAIModelList, providerView, retrieveModel, type PriceLookup } from './api-views.ts';
import { per1k } from '../../core/money/money.ts';
import { providerRouterSchema, type ProviderRouterConfig } from './schema.ts';
import { createProvidersService } from './admin-service.ts';
import { createDeploymentPicker, modelGroupsOf, unconfiguredGroupProviders, unknownProviders, type Deployment } from './routing/model-groups.ts';
import { firstAttempt, type AttemptState } from './routing/fallback-plan.ts';
import { checkModelAllowed, modelAllowed } from './routing/model-allow-list.ts';
import { GEMINI_MODELS_GET, GEMINI_MODELS_LIST, geminiModelOf, geminiModelPage, type CatalogModel } from '../../core/dialects/gemini/index.ts';
import type { Credential } from './providers/base.ts';
import type { FailedAttempt } from '../../core/upstream/upstream-call.ts';
import { createUpstreamHealth, type AttemptOutcome, type AttemptTicket, type UpstreamHealth } from './health/upstream-health.ts';
import { keyFingerprint, type KeyPool, type PoolKey } from './routing/key-pool.ts';
import { then, type MaybePromise } from '../../core/runtime/maybe-promise.ts';
import type { ModelCall } from '../../core/upstream/upstream-call.ts';
import { MODELS_RETRIEVE } from '../../core/routes.ts';

export { resolveModel, type ResolvedModel } from './routing/resolve-model.ts';

/** Instantiates the manifest's providers by id. */
export function createProviders(config: ProviderRouterConfig, ctx: Pick<PluginContext, 'upstream'>): Map<string, Provider> {
  const providers = new Map<string, Provider>();
  for (const [id, settings] of Object.entries(config.providers)) {
    const ProviderType = providerTypes.get(settings.type)!;
    // A provider with only a pool lists its models (and counts as configured) with the pool's first key.
    const apiKey = settings.apiKey || firstPoolKey(settings.apiKeys);
    providers.set(id, new ProviderType(id, Object.assign({}, settings, { apiKey }), ctx.upstream));
  }
  return providers;
}

function firstPoolKey(keys: ProviderSettings['apiKeys']): string {
  for (const entry of keys ?? []) {
    const key = typeof entry === 'string' ? entry : entry.key;
    if (key) return key;
  }
  return '';
}

/**
 * Warns about a shared provider key that is a Tollgate key (`tg_...`): the walkthrough's two keys
 * swapped, or one variable (`OPENAI_API_KEY`) used for both. The upstream would refuse every request.
 */
function warnAboutGatewayKeys(config: ProviderRouterConfig, log: PluginContext['log']): void {
  for (const [id, settings] of Object.entries(config.providers)) {
    const keys = [settings.apiKey, ...(settings.apiKeys ?? []).map((k) => (typeof k === 'string' ? k : k.key))];
    if (!keys.some((key) => key.startsWith('tg_'))) continue;
    log.warn(`provider "${id}" is configured with a Tollgate key (tg_...) as its apiKey; it needs the provider's own key (from the manifest or its environment variable), and clients send the tg_ key to the gateway`, { provider: id });
  }
}

/** Waits `ms`, or less when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** The router's state for one exchange. */
interface RouterState extends AttemptState {
  /** The attempt in flight, until its outcome is reported to the health module. */
  ticket: AttemptTicket | null;
  /** Pooled keys this request tried already: a retry on the same deployment takes another. */
  triedKeys: Set<PoolKey>;
  /** The deployment tried although its breaker is open (every deployment of the request was). */
  forced: Deployment | null;
  /** The error that answered, for its retry-after when the last attempt's key rests. */
  error: GatewayError | null;
}

/** The provider, model and credential of a deployment for one caller, without side effects. */
interface PreparedDeployment {
  provider: Provider;
  model: string;
  /** Null when a key of `pool` is to be taken. */
  credential: Credential | null;
  pool: KeyPool | null;
}

/** What one router instance is wired with: built once in `createProviderRouter`, read by every request. */
interface Router {
  config: ProviderRouterConfig;
  ctx: PluginContext;
  providers: Map<string, Provider>;
  groups: ReturnType<typeof modelGroupsOf>;
  picker: ReturnType<typeof createDeploymentPicker>;
  retryOnStatus: Set<number>;
  health: UpstreamHealth;
  /** Providers that answer embeddings, named in the 400 for one that does not. */
  embedders: string[];
  catalog: Catalog;
  credentials: ReturnType<typeof createCredentialResolver>;
  userCatalog: ReturnType<typeof createUserCatalog>;
  prices: PriceLookup;
}

async function createProviderRouter(config: ProviderRouterConfig, ctx: PluginContext): Promise<Plugin<RouterState>> {
  warnAboutGatewayKeys(config, ctx.log);
  const providers = createProviders(config, ctx);
  const groups = modelGroupsOf(config.models);
  const unknown = unknownProviders(groups, new Set(providers.keys()));
  if (unknown.length > 0) ctx.log.warn('model groups name providers that are not configured; those deployments are skipped', { deployments: unknown });
  const health: UpstreamHealth = createUpstreamHealth(
    { circuitBreaker: config.circuitBreaker, keyCooldownMs: config.keyCooldownMs },
    config.providers,
    [...groups.values()].flatMap((g) => g.deployments.map((d) => d.target)).filter((t) => providers.has(t.slice(0, t.indexOf('/')))),
    { clock: ctx.clock, log: ctx.log, metrics: ctx.metrics },
  );
  ctx.services.provide('upstreamHealth', { snapshot: health.snapshot, readiness: health.readiness, enableKey: health.enableKey });
  const persist = (provider: string, models: CatalogEntry[]) => persistCatalog(ctx.store.db, provider, models);
  const catalog = createCatalog(providers, {
    ttlMs: config.catalogTtlMs,
    log: ctx.log,
    persisted: await loadPersistedCatalog(ctx.store),
    onDiscovered: persist,
    shared: {
      latest: async (provider) => (await loadPersistedCatalog(ctx.store, provider)).get(provider),
      lease: (provider, ttlMs) => ctx.leases.tryAcquire(`catalog:${provider}`, ttlMs),
    },
  });
  const credentials = createCredentialResolver(ctx.store, ctx.keyring, ctx.log);
  const router: Router = {
    config, ctx, providers, groups, health, catalog, credentials,
    picker: createDeploymentPicker(),
    retryOnStatus: new Set(config.retry.retryOnStatus),
    embedders: [...providers.values()].filter((p) => p.embeds).map((p) => p.id),
    userCatalog: createUserCatalog(config.catalogTtlMs, ctx.log),
    prices: (provider, model) => priceLookup(ctx, provider, providers.get(provider)?.priceModelOf(model) ?? model),
  };
  ctx.services.provide('providers', Object.assign(createProvidersService(providers, credentials, persist), {
    allowedModels: async (gatewayUserId: number, patterns: readonly string[] | null, teamPatterns?: readonly string[] | null) => (await allowedModelsOf(router, gatewayUserId, patterns, teamPatterns)).data,
  }));

  return {
    name: 'provider-router',
    createState: () => ({ release: null, ticket: null, triedKeys: new Set(), forced: null, error: null }),
    // Not async: a model call to a `provider/model` target with cached credentials is routed without
    // a promise (`core/runtime/maybe-promise.ts`); the listing endpoints and token counts are.
    route(ex: Exchange, state: RouterState) {
      switch (ex.operation) {
        case 'models.list':
        case MODELS_RETRIEVE:
        case 'models.catalog':
          return listing(router, ex);
        case 'providers.get':
          return describeProvider(router, ex);
        case GEMINI_MODELS_LIST:
        case GEMINI_MODELS_GET:
          return geminiListing(router, ex);
        default:
          // Every other operation reaching the router is a model call (a dialect's); endpoints of
          // other plugins are answered by them earlier in the chain.
          if (!ex.request) throw routeNotFound(ex.method, ex.path);
      }
      return then(deploymentsFor(router, ex, ex.request.model), (found) => routeModelCall(router, ex, state, found));
    },
    onError(_ex, state, error) {
      state.error = error;
    },
    onResponseEnd(ex, state) {
      state.release?.();
      state.release = null;
      settleLast(router, ex, state);
    },
    close() {
      credentials.close();
    },
  };
}

/** The pricing plugin's price of a model, per 1k tokens as the API views show it; null when unpriced. */
function priceLookup(ctx: PluginContext, provider: string, model: string): ReturnType<PriceLookup> {
  const price = ctx.services.get('pricing')?.priceFor(provider, model);
  if (!price) return null;
  return {
    input_price_per_1k: per1k(price.input_price_per_million)!,
    output_price_per_1k: per1k(price.output_price_per_million)!,
    cached_input_price_per_1k: per1k(price.cached_input_price_per_million),
  };
}

/**
 * The catalog as one caller sees it: the shared lists, plus, for providers without a shared key,
 * the lists their own key gives them. Bare model ids resolve through this view too.
 */
function catalogFor(r: Router, ex: Exchange): Catalog {
  return catalogOfUser(r, ex.principal?.gatewayUserId ?? null);
}

/** `catalogFor` by user id (null: the shared lists only). */
function catalogOfUser(r: Router, userId: number | null): Catalog {
  const own = async (id: string): Promise<CatalogEntry[] | null> => {
    const provider = r.providers.get(id)!;
    if (userId === null || provider.sharedCredential()) return null;
    const credential = await r.credentials.resolve(provider, userId);
    return credential?.source === 'user' ? r.userCatalog.modelsOf(provider, userId, credential) : null;
  };
  const view: Catalog = {
    async all() {
      const lists = await r.catalog.all();
      return Promise.all(lists.map(async (l) => ({ provider: l.provider, models: (await own(l.provider)) ?? l.models })));
    },
    async modelsOf(id) {
      return (r.providers.has(id) ? await own(id) : null) ?? r.catalog.modelsOf(id);
    },
    async providersOf(modelId) {
      return (await view.all()).filter((l) => l.models.some((m) => m.id === modelId)).map((l) => l.provider);
    },
  };
  return view;
}

async function describeProvider(r: Router, ex: Exchange): Promise<Reply> {
  const id = ex.params.provider ?? '';
  const provider = r.providers.get(id);
  if (!provider) throw providerNotFound(id, [...r.providers.keys()]);
  const credential = await r.credentials.resolve(provider, ex.principal?.gatewayUserId ?? null);
  const models = await catalogFor(r, ex).modelsOf(id);
  // Discovered lists name dated models: price them with the dataset's matcher (loaded on first need).
  await r.ctx.services.get('pricing')?.ready();
  return reply(200, providerView(provider, credential, models, r.prices));
}

/**
 * Where `deployment` sends a request of `userId`: the user's own credential, else the deployment's
 * key, else the provider's pool (a key is taken per attempt), else the provider's shared key.
 * Throws 400 `provider_not_configured` when there is none.
 */
function prepare(r: Router, ex: Exchange, deployment: Deployment, userId: number | null): MaybePromise<PreparedDeployment> {
  // Synchronous for a `provider/model` target with cached credentials: no promise per request.
  return then(resolveModel(deployment.target, r.providers, () => catalogFor(r, ex), r.config.providerOrder), ({ provider, model }) =>
    then(r.credentials.resolve(provider, userId), (resolved): PreparedDeployment => {
      if (resolved?.source === 'user') return { provider, model, credential: resolved, pool: null };
      if (deployment.apiKey) return { provider, model, credential: { apiKey: deployment.apiKey, baseUrl: provider.baseUrl, source: 'shared' }, pool: null };
      const pool = r.health.pool(provider.id);
      if (pool) return { provider, model, credential: null, pool };
      if (!resolved) throw providerNotConfigured(provider.id);
      return { provider, model, credential: resolved, pool: null };
    }));
}

/**
 * The call of one attempt on `deployment`: past its breaker (claiming the half-open probe), with a
 * key of the pool when it has one; sets `ex.target` and the state's ticket. Throws when the
 * deployment cannot take the request (the plan then skips it).
 */
function attempt(r: Router, ex: Exchange, deployment: Deployment, state: RouterState): MaybePromise<ModelCall> {
  return then(prepare(r, ex, deployment, ex.principal?.gatewayUserId ?? null), (prepared) => callOn(r, ex, deployment, state, prepared));
}

/** `attempt` once its deployment is prepared: the breaker's admission, a pooled key, the call. */
function callOn(r: Router, ex: Exchange, deployment: Deployment, state: RouterState, { provider, model, credential, pool }: PreparedDeployment): ModelCall {
  const admission = r.health.admit(deployment.target, deployment === state.forced);
  if (!admission) throw upstreamUnavailable(provider.id, `the deployment "${deployment.target}" is half-open and its one probe request is already out.`);
  let key: PoolKey | null = null;
  if (pool) {
    key = pool.take(r.ctx.clock(), state.triedKeys);
    if (!key) {
      r.health.abandon({ deployment: deployment.target, admission, key: null });
      throw upstreamUnavailable(provider.id, 'every key of its pool is disabled after the upstream refused it on two models, or was tried for this request already.');
    }
    state.triedKeys.add(key);
  }
  const ticket: AttemptTicket = { deployment: deployment.target, admission, key, usersOwn: credential?.source === 'user' };
  try {
    const apiKey = credential ? credential.apiKey : key!.apiKey;
    ex.target = { provider: provider.id, model, promptTokenRules: provider.promptTokenRules(model), upstreamKey: key ? key.id : keyFingerprint(apiKey) };
    const priceModel = provider.priceModelOf(model);
    if (priceModel !== model) ex.target.priceModel = priceModel;
    const call = upstreamCallFor(ex, provider, { model, credential: credential ?? { apiKey, baseUrl: provider.baseUrl, source: 'shared' } }, r.embedders);
    state.ticket = ticket;
    return call;
  } catch (err) {
    r.health.abandon(ticket);
    throw err;
  }
}

/** Reports a failed attempt; true when a pooled key was at fault and another key may be tried (see `AttemptDeps.settle`). */
function settleFailed(r: Router, ex: Exchange, failed: FailedAttempt, state: RouterState): boolean {
  const ticket = state.ticket;
  state.ticket = null;
  if (!ticket) return false;
  const outcome: AttemptOutcome = { status: failed.upstreamStatus, errorCode: failed.error.code, latencyMs: ex.attempts?.at(-1)?.latencyMs ?? 0, headers: failed.error.headers };
  const verdict = r.health.settle(ticket, outcome);
  if (ticket.key === null) return false;
  // A 429 is retried on another key only when the retry policy retries 429s at all.
  return verdict === 'refused' || (verdict === 'rate-limited' && r.retryOnStatus.has(429));
}

/** At the end of the response: the outcome of the attempt not reported yet (the one that answered), and its tokens. */
function settleLast(r: Router, ex: Exchange, state: RouterState): void {
  const ticket = state.ticket;
  state.ticket = null;
  if (!ticket) return;
  const last = ex.attempts?.at(-1);
  if (!last) return r.health.abandon(ticket);
  r.health.settle(ticket, { status: last.status, errorCode: last.errorCode, latencyMs: last.latencyMs, headers: state.error?.headers ?? {} });
  if (ex.usage) r.health.addTokens(ticket, ex.usage.promptTokens + ex.usage.completionTokens);
}

/** The deployments a model call may use, in the order to try them; checks the key's allow-list. */
function deploymentsFor(r: Router, ex: Exchange, requested: string): MaybePromise<Deployment[]> {
  const patterns = ex.principal?.models;
  const group = r.groups.get(requested);
  if (group) {
    checkModelAllowed(patterns, requested, null, ex.principal?.team ?? null);
    return r.picker.order(group);
  }
  return then(resolveModel(requested, r.providers, () => catalogFor(r, ex), r.config.providerOrder), ({ provider, model }) => {
    checkModelAllowed(patterns, requested, `${provider.id}/${model}`, ex.principal?.team ?? null);
    return [{ target: `${provider.id}/${model}`, weight: 1, apiKey: null }];
  });
}

/** The catalog endpoints: `GET /models`, `GET /models/{model}` (the models the caller's key may use), the priced catalog. */
async function listing(r: Router, ex: Exchange): Promise<Reply> {
  if (ex.operation === 'models.list') return reply(200, await allowedModelList(r, ex));
  if (ex.operation === MODELS_RETRIEVE) {
    const requested = ex.params.model ?? '';
    const model = retrieveModel(await allowedModelList(r, ex), requested);
    if (!model) throw modelNotFound(requested);
    return reply(200, model);
  }
  const lists = await catalogFor(r, ex).all();
  await r.ctx.services.get('pricing')?.ready();
  return reply(200, modelCatalog(lists, r.prices));
}

/**
 * `GET /api/v1/models` as the caller's key sees it: the entries its allow-list (`models`) matches,
 * by the listed id or the bare upstream id, as a model call would be checked.
 */
function allowedModelList(r: Router, ex: Exchange): Promise<ReturnType<typeof openAIModelList>> {
  return allowedModelsOf(r, ex.principal?.gatewayUserId ?? null, ex.principal?.models, ex.principal?.team?.models);
}

/**
 * `allowedModelList` for user `userId` with a key whose allow-list is `patterns` and a team whose
 * allow-list is `teamPatterns` (null or absent: every model); a model must pass both.
 */
async function allowedModelsOf(
  r: Router, userId: number | null, patterns: readonly string[] | null | undefined, teamPatterns?: readonly string[] | null,
): Promise<ReturnType<typeof openAIModelList>> {
  const list = openAIModelList(await catalogOfUser(r, userId).all(), r.groups);
  if (!patterns && !teamPatterns) return list;
  const data = list.data.filter((m) => modelAllowed(patterns, [m.id, baseModelIdOf(r, m.id)]) && modelAllowed(teamPatterns, [m.id, baseModelIdOf(r, m.id)]));
  return { object: list.object, data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}

/** A listed id without its provider prefix (`openai/gpt-4o` → `gpt-4o`); a group's name as it is. */
function baseModelIdOf(r: Router, id: string): string {
  const slash = id.indexOf('/');
  return r.groups.has(id) || slash === -1 ? id : id.slice(slash + 1);
}

/**
 * `GET /api/v1beta/models` and `/{model}`: the entries of `GET /api/v1/models` the caller's key may
 * use (its allow-list matched against the listed id and the bare upstream id), in Google's shape.
 */
async function geminiListing(r: Router, ex: Exchange): Promise<Reply> {
  const models: CatalogModel[] = (await allowedModelList(r, ex)).data.map((m) => ({ id: m.id, baseModelId: baseModelIdOf(r, m.id), displayName: m.display_name }));
  if (ex.operation === GEMINI_MODELS_LIST) return reply(200, geminiModelPage(models, ex.query));
  return reply(200, geminiModelOf(models, ex.params.model ?? ''));
}

/** A model call once its deployments are known: a local token count, or the first attempt. */
function routeModelCall(r: Router, ex: Exchange, state: RouterState, found: Deployment[]): MaybePromise<ModelCall | Reply> {
  const { usable: deployments, forced } = r.health.arrange(found);
  state.forced = forced;
  // A token count goes to the provider's own counting endpoint when it speaks the dialect, else the
  // local tokenizer answers it (for a group: as its first deployment would).
  if (isTokenCountOperation(ex.operation) && ex.dialect?.tokenCountBody) return countOrCall(r, ex, state, deployments);
  return firstCall(r, ex, state, deployments);
}

/** A token-count request: the local tokenizer answers unless the provider counts in the client's dialect. */
async function countOrCall(r: Router, ex: Exchange, state: RouterState, deployments: Deployment[]): Promise<ModelCall | Reply> {
  const { provider, model } = await prepare(r, ex, deployments[0]!, ex.principal?.gatewayUserId ?? null);
  if (!provider.speaksNatively(ex.dialect!.id, model, ex.operation)) {
    if (ex.untranslatable) throw ex.untranslatable;
    await r.ctx.tokens.ready();
    return reply(200, ex.dialect!.tokenCountBody!(r.ctx.tokens.promptTokens(ex)));
  }
  return firstCall(r, ex, state, deployments);
}

/** The first attempt over `deployments`, with this request's build and settle steps. */
function firstCall(r: Router, ex: Exchange, state: RouterState, deployments: Deployment[]): MaybePromise<ModelCall> {
  return firstAttempt(ex, deployments, state, {
    picker: r.picker, retry: r.config.retry, retryOnStatus: r.retryOnStatus, sleep,
    build: (deployment) => attempt(r, ex, deployment, state),
    settle: (failedEx, failed) => settleFailed(r, failedEx, failed, state),
    priceModelOf: (provider, model) => r.providers.get(provider)?.priceModelOf(model) ?? model,
  });
}

export const providerRouter = definePlugin<ProviderRouterConfig>({
  name: 'provider-router',
  description: 'Routes each request to its provider and model (terminal: listed last).',
  configSchema: providerRouterSchema,
  terminal: true,
  routes: providerRouterRoutes,
  checkConfig: (config) => unconfiguredGroupProviders(config.models, config.providers),
  create: createProviderRouter,
});
