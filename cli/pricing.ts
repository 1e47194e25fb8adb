/**
 * `tollgate pricing set|list|delete|import`: model prices in USD per million tokens. A price set here
 * is `manual` and always wins over imported ones. A running gateway notices the change within about
 * 250 ms (it watches the database for other processes' commits).
 */
import { readFile } from 'node:fs/promises';
import { Command } from 'commander';
import {
  deletePrice, importPrices, listPrices, PriceValidationError, setPrice, type ImportResult, type PriceInput,
} from '../core/money/price-table.ts';
import { datasetPrices, DEFAULT_DATASET_PROVIDERS } from '../core/money/price-dataset.ts';
import { MAX_USD_PER_MILLION, usdPerMillionProblem } from '../core/money/price-bounds.ts';
import type { PluginRegistry } from '../core/manifest.ts';
import { loadManifest } from './manifest-source.ts';
import { withPlugin } from './plugin-host.ts';
import { reprice, type RepriceResult } from '../core/money/reprice.ts';
import { resolveDataDir } from '../core/store/data-dir.ts';
import { usd } from '../core/money/money.ts';
import { addDataDirOption, withStore } from './context.ts';
import { auditCli } from './audit-row.ts';
import { CliError, printJson, printTable } from './output.ts';

const COLUMNS = ['model', 'provider', 'input_price_per_million', 'output_price_per_million', 'cached_input_price_per_million', 'cache_write_price_per_million', 'source', 'updated_at'];

interface PricingOptions {
  input?: number;
  output?: number;
  cachedInput?: number;
  cacheWrite?: number;
  provider?: string;
  config?: string;
  json?: boolean;
  dataDir?: string;
}

function parseUsdPerMillion(label: string) {
  return (value: string): number => {
    const n = Number(value);
    if (Number.isFinite(n) && n > MAX_USD_PER_MILLION) throw new CliError(`${label} must be at most ${MAX_USD_PER_MILLION} USD per million tokens, got "${value}"`);
    if (value.trim() === '' || usdPerMillionProblem(n) !== null) {
      throw new CliError(`${label} must be a non-negative number of USD per million tokens (e.g. 0.15), got "${value}"`);
    }
    return n;
  };
}

/** Store validation errors are the user's input errors: same exit code and style as option errors. */
function asCliError(err: unknown): never {
  if (err instanceof PriceValidationError) throw new CliError(err.message);
  throw err;
}

/** The rows of an import file: a JSON array of price objects. */
async function readImportFile(file: string): Promise<unknown[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as Error).message}`);
  }
  let rows: unknown;
  try {
    rows = JSON.parse(text);
  } catch (err) {
    throw new CliError(`${file} is not valid JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(rows)) throw new CliError(`${file} must hold a JSON array of {model, provider?, input_price_per_million, output_price_per_million, cached_input_price_per_million?, cache_write_price_per_million?}`);
  return rows as unknown[];
}

/** The part of the pricing plugin's config an import reads (its schema filled in the default). */
interface DatasetMapping {
  /** Gateway provider id → dataset provider id. */
  datasetProviders?: Record<string, string>;
}

/** The dataset rows, mapped with the manifest's pricing `datasetProviders` (or the defaults). */
async function readDataset(configPath: string | undefined, registry: PluginRegistry): Promise<unknown[]> {
  const pricing = (await loadManifest(configPath, registry)).manifest.plugins.find((p) => p.name === 'pricing');
  const providers = (pricing?.config as DatasetMapping | undefined)?.datasetProviders ?? DEFAULT_DATASET_PROVIDERS;
  return (await datasetPrices(providers, Date.now())).rows;
}

function describeImport(result: ImportResult): string {
  return `Imported prices: ${result.inserted} new, ${result.updated} updated, ${result.skippedManual} kept because they were set by hand, ${result.skippedInvalid} skipped as invalid (no model or a bad price).\n`;
}

export function pricingCommand(registry: PluginRegistry): Command {
  const pricing = new Command('pricing').description('manage model prices (USD per million tokens)');

  addDataDirOption(pricing.command('set').description('set the price of a model by hand (wins over imported prices)').argument('<model>'))
    .requiredOption('--input <usd>', 'input price, USD per million tokens', parseUsdPerMillion('--input'))
    .requiredOption('--output <usd>', 'output price, USD per million tokens', parseUsdPerMillion('--output'))
    .option('--cached-input <usd>', 'cache-read price, USD per million tokens (default: the input price)', parseUsdPerMillion('--cached-input'))
    .option('--cache-write <usd>', 'cache-write price, USD per million tokens (default: the input price)', parseUsdPerMillion('--cache-write'))
    .option('--provider <id>', 'only for this provider (default: any provider serving the model)')
    .option('--json', 'print JSON')
    .action(async (model: string, options: PricingOptions) => {
      const input: PriceInput = {
        model, provider: options.provider ?? null,
        input_price_per_million: options.input!, output_price_per_million: options.output!,
        cached_input_price_per_million: options.cachedInput ?? null, cache_write_price_per_million: options.cacheWrite ?? null,
      };
      const row = await withStore(options, async (store) => {
        const stored = await setPrice(store.db, input).catch(asCliError);
        await auditCli(store, 'pricing.set', { type: 'price', id: stored.model, after: stored });
        return stored;
      });
      if (options.json) printJson(row);
      else process.stdout.write(`Set the price of ${row.model}: $${row.input_price_per_million} input, $${row.output_price_per_million} output per million tokens.\n`);
    });

  addDataDirOption(pricing.command('list').description('list stored prices'))
    .option('--json', 'print JSON')
    .action(async (options: PricingOptions) => {
      const rows = await withStore(options, (store) => listPrices(store.db), 'reads');
      if (options.json) printJson(rows);
      else printTable(rows, COLUMNS);
    });

  addDataDirOption(pricing.command('delete').description('delete the price of a model').argument('<model>'))
    .option('--json', 'print JSON')
    .action(async (model: string, options: PricingOptions) => {
      const deleted = await withStore(options, async (store) => {
        const gone = await deletePrice(store.db, model);
        if (gone) await auditCli(store, 'pricing.delete', { type: 'price', id: model });
        return gone;
      });
      if (!deleted) throw new CliError(`no price for "${model}" (see \`tollgate pricing list\`)`);
      if (options.json) printJson({ model, deleted: true });
      else process.stdout.write(`Deleted the price of ${model}; its requests are unpriced unless another row matches.\n`);
    });

  addDataDirOption(pricing.command('import').description('import prices from FILE (a JSON array) or, without FILE, from the bundled price dataset').argument('[file]'))
    .option('--config <path>', 'manifest whose pricing.datasetProviders maps providers to the dataset (default: ./tollgate.json if present, else the built-in default)')
    .option('--json', 'print JSON')
    .action(async (file: string | undefined, options: PricingOptions) => {
      const rows = file ? await readImportFile(file) : await readDataset(options.config, registry);
      const result = await withStore(options, (store) => importPrices(store.db, rows));
      if (options.json) printJson(result);
      else process.stdout.write(describeImport(result));
    });

  addDataDirOption(pricing.command('reprice')
    .description("bill the log rows of MODEL again at today's price (after a price fix): their costs, the usage reports and the users' spend this budget period, in one transaction"))
    .requiredOption('--model <id>', 'the served model id (as in the log, without provider prefix)')
    .requiredOption('--from <date>', 'first instant: an ISO-8601 date or time (UTC unless it says otherwise)', parseInstant('--from'))
    .option('--to <date>', 'end, exclusive (default: now)', parseInstant('--to'))
    .option('--provider <id>', 'only rows this provider served')
    .option('--dry-run', 'print what would change, change nothing')
    .option('--config <path>', 'manifest (its pricing and budget settings; default: ./tollgate.json if present, else the built-in default)')
    .option('--json', 'print JSON')
    .action(async (options: RepriceCliOptions) => {
      const { manifest } = await loadManifest(options.config, registry);
      const pricingEntry = manifest.plugins.find((p) => p.name === 'pricing');
      if (!pricingEntry) throw new CliError('the manifest has no pricing plugin, so there is no price to bill at');
      const timeZone = (manifest.plugins.find((p) => p.name === 'budget')?.config as { timeZone?: string } | undefined)?.timeZone ?? 'UTC';
      const host = { registry, manifest, dataDir: resolveDataDir(options.dataDir) };
      const result = await withStore(options, (store) => withPlugin(pricingEntry, { ...host, store }, async (services) => {
        const book = services.get('pricing');
        if (!book) throw new CliError('the pricing plugin offers no price book');
        await book.ready();
        return reprice(store, book, {
          model: options.model, provider: options.provider, fromIso: options.from, toIso: options.to,
          dryRun: options.dryRun === true, timeZone, nowMs: Date.now(),
        });
      }));
      if (options.json) printJson(result);
      else process.stdout.write(describeReprice(result));
    });

  return pricing;
}

interface RepriceCliOptions {
  model: string;
  from: string;
  to?: string;
  provider?: string;
  dryRun?: boolean;
  config?: string;
  json?: boolean;
  dataDir?: string;
}

/** An option's date or time as an ISO-8601 UTC instant with ms, as the log stores them. */
function parseInstant(label: string) {
  return (value: string): string => {
    const ms = Date.parse(value);
    if (!/^\d{4}-\d{2}-\d{2}/.test(value) || !Number.isFinite(ms)) throw new CliError(`${label} must be an ISO-8601 date or time (e.g. 2026-11-01 or 2026-11-01T12:00:00Z), got "${value}"`);
    return new Date(ms).toISOString();
  };
}

const usdText = (nanos: number) => `$${usd(nanos).toFixed(6)}`;

function describeReprice(result: RepriceResult): string {
  const lines = [
    `${result.dry_run ? 'Would re-price' : 'Re-priced'} ${result.model}${result.provider ? ` (${result.provider})` : ''} from ${result.from} to ${result.to}:`,
    `  ${result.rows} rows with usage, ${result.changed_rows} ${result.dry_run ? 'would change' : 'changed'}${result.unpriced_rows ? `, ${result.unpriced_rows} without a price` : ''}`,
    `  cost before ${usdText(result.cost_before_nanos)} (${result.cost_before_nanos} nanos), after ${usdText(result.cost_after_nanos)} (${result.cost_after_nanos} nanos)`,
  ];
  for (const s of result.spend) {
    lines.push(`  user ${s.user_name} (${s.user_id}): spend this period ${usdText(s.spent_before_nanos)} -> ${usdText(s.spent_after_nanos)}`);
  }
  if (result.dry_run) lines.push('  (dry run: nothing was changed)');
  return `${lines.join('\n')}\n`;
}
