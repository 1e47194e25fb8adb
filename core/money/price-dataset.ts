/**
 * Prices from the maintained dataset `@pydantic/genai-prices` (pydantic/genai-prices on GitHub, data
 * bundled in the npm package: no network). The package is imported lazily, so the CLI and a gateway
 * that does not need it start without loading its ~1,000 model entries.
 *
 * The dataset's prices are USD per million tokens (`input_mtok`, `output_mtok`, `cache_read_mtok`,
 * `cache_write_mtok`); a tiered price (`{base, tiers}`, e.g. a higher rate past 272k prompt tokens)
 * is taken at its `base` rate. A model with several `ConditionalPrice`s takes the one in effect: the
 * latest `start_date` not in the future, else the unconstrained one (time-of-day discounts are
 * ignored: they are off-peak variants of the same model).
 */
import { fork, type ChildProcess } from 'node:child_process';
import type { ConditionalPrice, ModelInfo, ModelPrice, TieredPrices } from '@pydantic/genai-prices';
import type { PriceInput } from './price-table.ts';

/**
 * Gateway provider id → `@pydantic/genai-prices` provider id, in priority order (first wins a shared
 * model id). The pricing plugin's `datasetProviders` default; the CLI and the admin API fall back to
 * it when the manifest has no pricing plugin.
 */
export const DEFAULT_DATASET_PROVIDERS: Readonly<Record<string, string>> = Object.freeze({
  openai: 'openai',
  anthropic: 'anthropic',
  gemini: 'google',
  mistral: 'mistral',
  groq: 'groq',
  deepseek: 'deepseek',
  xai: 'x-ai',
  openrouter: 'openrouter',
  together: 'together',
  fireworks: 'fireworks',
  // Azure OpenAI's Global Standard deployments cost what OpenAI charges, and the dataset's own `azure`
  // list lacks the GPT-4o, 4.1 and 5 families; Data Zone and Regional deployments cost more (set by hand).
  azure: 'openai',
  // Bedrock's model and inference profile ids, priced by the dataset's `aws` rows (the provider maps
  // `us.` / in-region ids to their `regional.` rows: `BedrockProvider.priceModelOf`).
  bedrock: 'aws',
  // Vertex AI's Claude and Gemini prices are the dataset's `google` rows (after `gemini` here, they
  // are stored as `vertex/<model>`); ids without their `@version` (`VertexProvider.priceModelOf`).
  vertex: 'google',
});

/** What the parent sends, once. */
export interface DatasetChildRequest {
  providers: Record<string, string>;
  nowMs: number;
}

/** What the child answers: the rows, or why it could not read the dataset. */
export type DatasetChildAnswer = { rows: PriceInput[]; unknownProviders: string[] } | { error: string };

type GenaiPrices = typeof import('@pydantic/genai-prices');

let loading: Promise<GenaiPrices> | null = null;

/** The dataset module, imported once on first use. */
export function loadGenaiPrices(): Promise<GenaiPrices> {
  loading ??= import('@pydantic/genai-prices');
  return loading;
}

/** A dataset price field as USD per million tokens, or null when absent. */
function usdPerMillion(value: number | TieredPrices | undefined): number | null {
  if (typeof value === 'number') return value;
  if (value && typeof value === 'object' && typeof value.base === 'number') return value.base;
  return null;
}

/** The price record of `model` in effect at `nowMs` (see the module doc). */
export function priceInEffect(prices: ModelInfo['prices'], nowMs: number): ModelPrice | null {
  if (!Array.isArray(prices)) return prices;
  const conditional = prices;
  let best: ConditionalPrice | null = null;
  let bestStartMs = -Infinity;
  for (const candidate of conditional) {
    const constraint = candidate.constraint;
    if (constraint?.type !== 'start_date') continue;
    const startMs = Date.parse(constraint.start_date);
    if (startMs <= nowMs && startMs > bestStartMs) {
      best = candidate;
      bestStartMs = startMs;
    }
  }
  best ??= conditional.find((c) => c.constraint === undefined) ?? conditional[0] ?? null;
  return best?.prices ?? null;
}

/**
 * One model's row, or null when the dataset has no per-token text price for it (audio-hour or
 * per-page models, free placeholders). An input-only model (embeddings) gets an output price of 0.
 */
function rowOf(model: ModelInfo, provider: string, nowMs: number): PriceInput | null {
  const prices = priceInEffect(model.prices, nowMs);
  if (!prices) return null;
  const input = usdPerMillion(prices.input_mtok);
  const output = usdPerMillion(prices.output_mtok);
  if (input === null && output === null) return null;
  return {
    model: model.id,
    provider,
    input_price_per_million: input ?? 0,
    output_price_per_million: output ?? 0,
    cached_input_price_per_million: usdPerMillion(prices.cache_read_mtok),
    cache_write_price_per_million: usdPerMillion(prices.cache_write_mtok),
  };
}

/**
 * Rows for every model of the mapped dataset providers, `provider` set to OUR provider id.
 * `providers` maps gateway provider id → dataset provider id, in priority order: when two providers
 * list the same model id, the first keeps the bare id and a later one's row is stored as
 * `provider/model` (the form the price book looks up first), so both prices survive. Providers the
 * dataset does not know are reported in `unknownProviders`.
 */
export async function datasetPrices(providers: Readonly<Record<string, string>>, nowMs: number): Promise<{ rows: PriceInput[]; unknownProviders: string[] }> {
  const { findProvider } = await loadGenaiPrices();
  const rows: PriceInput[] = [];
  const seen = new Set<string>();
  const unknownProviders: string[] = [];
  for (const [provider, datasetId] of Object.entries(providers)) {
    const found = findProvider({ providerId: datasetId });
    if (!found) {
      unknownProviders.push(provider);
      continue;
    }
    for (const model of found.models) {
      const row = rowOf(model, provider, nowMs);
      if (!row) continue;
      if (seen.has(row.model)) row.model = `${provider}/${row.model}`;
      if (seen.has(row.model)) continue;
      seen.add(row.model);
      rows.push(row);
    }
  }
  return { rows, unknownProviders };
}

/**
 * `datasetPrices` in a child process that exits once it has answered: the same rows, but a
 * long-running process (the gateway seeding on first start, an admin import) keeps none of the
 * dataset's memory afterwards (issue 17, footprint). A child rather than a worker thread: a worker
 * shares the process's allocator, whose arenas kept ~5 MB of the worker's C++ memory resident for
 * good; a process returns everything when it exits. Rejects when the child fails or exits silent.
 */
export function datasetPricesApart(providers: Readonly<Record<string, string>>, nowMs: number): Promise<{ rows: PriceInput[]; unknownProviders: string[] }> {
  const child = startDatasetChild();
  return new Promise((resolve, reject) => {
    let answered = false;
    child.once('message', (message) => {
      answered = true;
      const answer = message as DatasetChildAnswer;
      if ('error' in answer) reject(new Error(`the price dataset process failed: ${answer.error}`));
      else resolve(answer);
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (!answered) reject(new Error(`the price dataset process exited (${signal ?? `code ${code}`}) without an answer`));
    });
    const request: DatasetChildRequest = { providers: { ...providers }, nowMs };
    child.send(request);
  });
}

/**
 * `dist/price-dataset-process.js` beside the bundle (`bin/build.js` builds it), or the TypeScript
 * source with tsx's loader (`--import tsx`). Its output goes to the gateway's stderr.
 */
function startDatasetChild(): ChildProcess {
  const bundled = !import.meta.url.endsWith('.ts');
  const script = new URL(bundled ? './price-dataset-process.js' : './price-dataset-process.ts', import.meta.url);
  return fork(script, [], {
    execArgv: bundled ? [] : ['--import', import.meta.resolve('tsx')],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'advanced',
  });
}

/**
 * Resolves real model names to the dataset's canonical ids with the library's own matching rules
 * (synchronous once loaded, for the price book's hot path misses).
 */
export type ModelIdResolver = (datasetProviderId: string, modelId: string) => string | null;

/** Loads the dataset and returns a synchronous `ModelIdResolver`. */
export async function createModelIdResolver(): Promise<ModelIdResolver> {
  const { calcPrice } = await loadGenaiPrices();
  return (datasetProviderId, modelId) => {
    try {
      return calcPrice({ input_tokens: 0 }, modelId, { providerId: datasetProviderId })?.model.id ?? null;
    } catch {
      // The library throws for a provider id it does not know; for us that is just "no match".
      return null;
    }
  };
}

/**
 * The dataset's canonical model id for a real model name, so dated names find their imported row:
 * `claude-3-5-haiku-20241022` → `claude-3-5-haiku-latest`, `gpt-4o-mini-2024-07-18` → `gpt-4o-mini`.
 * Null when the dataset does not know the model for that provider.
 */
export async function datasetModelId(datasetProviderId: string, modelId: string): Promise<string | null> {
  return (await createModelIdResolver())(datasetProviderId, modelId);
}
