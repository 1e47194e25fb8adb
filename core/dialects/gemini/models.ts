/**
 * Gemini's model list in the `gemini` dialect: `GET /api/v1beta/models` (`{models: [Model],
 * nextPageToken?}`, paged by `pageSize` and `pageToken`) and `GET /api/v1beta/models/{model}` (one
 * `Model`), what `@google/genai`'s `models.list` / `models.get` read. The entries are the gateway's
 * catalog, the same as `GET /api/v1/models` (the provider router answers both routes and filters by
 * the key's allow-list); this file gives them Google's shape.
 *
 * - `name` is `models/<id>` with the id a client sends back (`provider/model` or a manifest model
 *   name), so `models.get({model: name})` and `generateContent` on it route as listed; `baseModelId` is
 *   the upstream's own id.
 * - `supportedGenerationMethods`: the catalog does not say what a model does, so an id that names
 *   an embedding model (`embed` in it: `text-embedding-3-small`, `gemini-embedding-001`) lists the
 *   embeddings methods, any other the generation ones.
 * - `version`, `inputTokenLimit` and `outputTokenLimit` are left out: the catalog does not know them
 *   (the SDK's `Model` has every field optional).
 *
 * Source: https://ai.google.dev/api/models (`Model`, `models.list`, `models.get`).
 */
import { invalidRequest, modelNotFound } from '../../errors.ts';

/** Operation of `GET /api/v1beta/models`. */
export const GEMINI_MODELS_LIST = 'gemini.models.list';
/** Operation of `GET /api/v1beta/models/{model}`. */
export const GEMINI_MODELS_GET = 'gemini.models.get';

/** Google's default and largest page (https://ai.google.dev/api/models#method:-models.list). */
const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 1000;

/** A catalog entry as the list shows it. */
export interface CatalogModel {
  /** The id clients use: `provider/model`, or a manifest model name. */
  id: string;
  /** The upstream's own model id (the id itself for a manifest model name). */
  baseModelId: string;
  displayName: string;
}

/** A `Model` of Google's list. */
export interface GeminiModel {
  name: string;
  baseModelId: string;
  displayName: string;
  supportedGenerationMethods: string[];
}

const EMBED_METHODS = ['embedContent', 'batchEmbedContents'];
const GENERATE_METHODS = ['generateContent', 'streamGenerateContent', 'countTokens'];

/** One catalog entry as Google's `Model`. */
export function geminiModel(model: CatalogModel): GeminiModel {
  return {
    name: `models/${model.id}`,
    baseModelId: model.baseModelId,
    displayName: model.displayName,
    supportedGenerationMethods: /embed/i.test(model.baseModelId) ? EMBED_METHODS : GENERATE_METHODS,
  };
}

/** `pageSize` as a count: default 50, at most 1000. Throws 400 naming `pageSize` when not a positive integer. */
function pageSizeOf(raw: string | undefined): number {
  if (raw === undefined || raw === '') return DEFAULT_PAGE_SIZE;
  const size = Number(raw);
  if (!Number.isInteger(size) || size < 0) throw invalidRequest(`"pageSize" must be a whole number of models, not "${raw}".`, 'pageSize');
  return size === 0 ? DEFAULT_PAGE_SIZE : Math.min(size, MAX_PAGE_SIZE);
}

/** The offset a `pageToken` of ours stands for. Throws 400 naming `pageToken` when it is not one. */
function offsetOf(token: string | undefined): number {
  if (!token) return 0;
  const offset = Number(Buffer.from(token, 'base64url').toString('utf8'));
  if (!Number.isSafeInteger(offset) || offset <= 0 || Buffer.from(String(offset)).toString('base64url') !== token) {
    throw invalidRequest('"pageToken" is not a token this gateway gave; send the "nextPageToken" of the previous page.', 'pageToken');
  }
  return offset;
}

/** A page of `models` as `models.list` answers it, for the request's `pageSize` and `pageToken`. Throws 400 for a bad one. */
export function geminiModelPage(models: readonly CatalogModel[], query: Readonly<Record<string, string>>): { models: GeminiModel[]; nextPageToken?: string } {
  const size = pageSizeOf(query.pageSize);
  const offset = offsetOf(query.pageToken);
  const page = models.slice(offset, offset + size).map(geminiModel);
  const next = offset + size;
  return next < models.length ? { models: page, nextPageToken: Buffer.from(String(next)).toString('base64url') } : { models: page };
}

/**
 * The `Model` `requested` names (`models/` taken off): the entry of that id, else the one entry whose
 * upstream id it is. Throws 404 `model_not_found` when none lists it, 400 when several providers do.
 */
export function geminiModelOf(models: readonly CatalogModel[], requested: string): GeminiModel {
  const id = requested.replace(/^models\//, '');
  const exact = models.find((m) => m.id === id);
  if (exact) return geminiModel(exact);
  const bare = models.filter((m) => m.id.includes('/') && m.baseModelId === id);
  if (bare.length > 1) throw invalidRequest(`The model "${id}" is offered by several providers: ${bare.map((m) => m.id).join(', ')}. Name one.`, 'model');
  if (bare.length === 0) throw modelNotFound(id, `The model "${id}" does not exist or is not available. GET /api/v1beta/models lists the models you can use.`);
  return geminiModel(bare[0]!);
}
