/**
 * The bodies of the model and provider endpoints the router answers itself:
 * `GET /api/v1/models` (OpenAI's list shape), `GET /api/models` (with display names) and
 * `GET /api/providers/{provider}`. Every model name shown comes from `getModelDisplayName`.
 */
import type { CatalogEntry, Credential, Provider } from './providers/base.ts';
import { getModelDisplayName } from '../../core/catalog/model-display-name.ts';
import { invalidRequest } from '../../core/errors.ts';
import type { ModelGroup } from './routing/model-groups.ts';

type Lists = Array<{ provider: string; models: CatalogEntry[] }>;

/** USD per 1k tokens for the views (null = no price); from the pricing plugin when it is listed. */
export type PriceLookup = (provider: string, model: string) => { input_price_per_1k: number; output_price_per_1k: number; cached_input_price_per_1k: number | null } | null;

const NO_PRICES: PriceLookup = () => null;

/** One entry of `GET /api/v1/models`: OpenAI's model fields beside Anthropic's (`type`, `display_name`, `created_at`). */
function listedModel(id: string, m: CatalogEntry) {
  return {
    id, object: 'model', created: m.created, owned_by: m.owned_by,
    type: 'model', display_name: getModelDisplayName(m), created_at: new Date(m.created * 1000).toISOString(),
  };
}

/**
 * `GET /api/v1/models` in a shape both SDKs accept: OpenAI's `{object:"list", data:[{id, object,
 * created, owned_by}]}` with Anthropic's `has_more`, `first_id`, `last_id` and per-model `type`,
 * `display_name`, `created_at` (Claude Code's gateway model discovery). Ids are `provider/model`,
 * then the manifest's model names and groups (`models`), which clients may use as they are (owned by
 * the provider of their first deployment).
 */
export function openAIModelList(lists: Lists, groups: ReadonlyMap<string, ModelGroup> = new Map()) {
  const data = lists.flatMap(({ provider, models }) => models.map((m) => listedModel(`${provider}/${m.id}`, m)));
  for (const { name, deployments } of groups.values()) {
    const target = deployments[0]!.target;
    data.push(listedModel(name, { id: name, created: 0, owned_by: target.slice(0, target.indexOf('/')), display_name: name }));
  }
  return { object: 'list', data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}

/**
 * `GET /api/v1/models/{model}` (OpenAI's `models.retrieve`): the entry of `GET /api/v1/models` whose
 * id is `requested` (`provider/model` or a manifest model name), else the one entry of a bare id that
 * exactly one provider lists. Null when none lists it; throws 400 when several do (as a model call would).
 */
export function retrieveModel(list: ReturnType<typeof openAIModelList>, requested: string) {
  const exact = list.data.find((m) => m.id === requested);
  if (exact) return exact;
  const bare = list.data.filter((m) => m.id.slice(m.id.indexOf('/') + 1) === requested);
  if (bare.length > 1) {
    throw invalidRequest(`The model "${requested}" is offered by several providers: ${bare.map((m) => m.id).join(', ')}. Name one.`, 'model');
  }
  return bare[0] ?? null;
}

/** One model as `GET /api/models` and `GET /api/providers/{provider}` show it, with its per-1k prices. */
export function modelView(provider: string, m: CatalogEntry, prices: PriceLookup = NO_PRICES) {
  const price = prices(provider, m.id);
  return {
    id: `${provider}/${m.id}`,
    object: 'model',
    provider,
    model: m.id,
    display_name: getModelDisplayName(m),
    created: m.created,
    owned_by: m.owned_by,
    input_price_per_1k: price?.input_price_per_1k ?? null,
    output_price_per_1k: price?.output_price_per_1k ?? null,
    cached_input_price_per_1k: price?.cached_input_price_per_1k ?? null,
  };
}

/** `GET /api/models`: `{object:"list", data:[modelView...]}`. */
export function modelCatalog(lists: Lists, prices: PriceLookup = NO_PRICES) {
  return { object: 'list', data: lists.flatMap(({ provider, models }) => models.map((m) => modelView(provider, m, prices))) };
}

/**
 * `GET /api/providers/{provider}`: the provider, whether the caller can use it and with whose
 * credential (`user` = their own, `shared` = the gateway's), and its models (empty when listing
 * failed; the server log says why).
 */
export function providerView(provider: Provider, credential: Credential | null, models: CatalogEntry[], prices: PriceLookup = NO_PRICES) {
  return {
    id: provider.id,
    object: 'provider',
    name: provider.name,
    configured: credential !== null,
    credential_source: credential?.source ?? null,
    models: models.map((m) => modelView(provider.id, m, prices)),
  };
}
