/** `tollgate pricing set|list|delete|import`, as child processes against a temp data dir. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliJson, runCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/tmp.ts';
import type { ModelPrice } from '../../core/money/price-table.ts';

/** A row as `pricing list --json` prints it. */
type Row = ModelPrice;

interface Counts {
  inserted: number;
  updated: number;
  skippedManual: number;
  skippedInvalid: number;
}

function writeJson(dir: string, value: unknown): string {
  const file = join(dir, `prices-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(value));
  return file;
}

describe('tollgate pricing', () => {
  test('set, list and delete a price', async () => {
    const dataDir = tempDir();
    const row = await cliJson<Row>(['pricing', 'set', 'claude-sonnet-4-5', '--input', '3', '--output', '15', '--cached-input', '0.3', '--cache-write', '3.75', '--provider', 'anthropic'], { dataDir });
    assert.deepEqual(
      [row.model, row.provider, row.input_price_per_million, row.output_price_per_million, row.cached_input_price_per_million, row.cache_write_price_per_million, row.source],
      ['claude-sonnet-4-5', 'anthropic', 3, 15, 0.3, 3.75, 'manual'],
    );
    await cliJson(['pricing', 'set', 'gpt-4o-mini', '--input', '0.15', '--output', '0.6'], { dataDir });
    const list = await cliJson<Row[]>(['pricing', 'list'], { dataDir });
    assert.deepEqual(list.map((r) => [r.model, r.cached_input_price_per_million]), [['claude-sonnet-4-5', 0.3], ['gpt-4o-mini', null]]);

    const table = await runCli(['pricing', 'list'], { dataDir });
    assert.match(table.stdout, /^MODEL\s+PROVIDER\s+INPUT_PRICE_PER_MILLION/);
    assert.match(table.stdout, /gpt-4o-mini\s+-\s+0\.15\s+0\.6/);

    assert.deepEqual(await cliJson(['pricing', 'delete', 'gpt-4o-mini'], { dataDir }), { model: 'gpt-4o-mini', deleted: true });
    const again = await runCli(['pricing', 'delete', 'gpt-4o-mini'], { dataDir });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^error: no price for "gpt-4o-mini" \(see `tollgate pricing list`\)/);
    assert.deepEqual((await cliJson<Row[]>(['pricing', 'list'], { dataDir })).map((r) => r.model), ['claude-sonnet-4-5']);
  });

  test('refuses bad numbers and bad provider ids with a clear message and stores nothing', async () => {
    const dataDir = tempDir();
    const cases: Array<[string[], RegExp]> = [
      [['--input', 'abc', '--output', '1'], /--input must be a non-negative number of USD per million tokens \(e\.g\. 0\.15\), got "abc"/],
      [['--input', '1', '--output', '-2'], /--output must be a non-negative number of USD per million tokens \(e\.g\. 0\.15\), got "-2"/],
      [['--input', '1', '--output', '2', '--cached-input', 'Infinity'], /--cached-input must be a non-negative number/],
      [['--input', '2e15', '--output', '1'], /--input must be at most 100000 USD per million tokens, got "2e15"/],
      [['--input', '1', '--output', '2', '--provider', 'Open AI'], /provider must be a provider id such as "openai"/],
      [['--input', '1'], /required option '--output <usd>' not specified/],
    ];
    for (const [options, message] of cases) {
      const result = await runCli(['pricing', 'set', 'm', ...options], { dataDir });
      assert.equal(result.code, 1, options.join(' '));
      assert.match(result.stderr, message);
    }
    assert.deepEqual(await cliJson(['pricing', 'list'], { dataDir }), []);
  });

  test('imports a file, skipping rows without a model or with a bad price, and never overwrites a manual price', async () => {
    const dataDir = tempDir();
    await cliJson(['pricing', 'set', 'manual-model', '--input', '9', '--output', '9'], { dataDir });
    const file = writeJson(dataDir, [
      { model: 'manual-model', input_price_per_million: 1, output_price_per_million: 1 },
      { model: 'new-model', provider: 'groq', input_price_per_million: 0.5, output_price_per_million: 0.8, cached_input_price_per_million: 0.25 },
      { model: null, input_price_per_million: 1, output_price_per_million: 1 },
      { input_price_per_million: 1, output_price_per_million: 1 },
      { model: 'negative', input_price_per_million: -1, output_price_per_million: 1 },
      { model: 'text-price', input_price_per_million: 'cheap', output_price_per_million: 1 },
      { model: 'absurd-price', input_price_per_million: 1, output_price_per_million: 2e15 },
    ]);
    assert.deepEqual(await cliJson<Counts>(['pricing', 'import', file], { dataDir }), { inserted: 1, updated: 0, skippedManual: 1, skippedInvalid: 5 });
    const list = await cliJson<Row[]>(['pricing', 'list'], { dataDir });
    assert.deepEqual(list.map((r) => [r.model, r.provider, r.input_price_per_million, r.source]), [['manual-model', null, 9, 'manual'], ['new-model', 'groq', 0.5, 'import']]);

    const text = await runCli(['pricing', 'import', file], { dataDir });
    assert.equal(text.code, 0, text.stderr);
    assert.equal(text.stdout, 'Imported prices: 0 new, 1 updated, 1 kept because they were set by hand, 5 skipped as invalid (no model or a bad price).\n');
  });

  test('refuses an import file that is not a JSON array', async () => {
    const dataDir = tempDir();
    const notArray = writeJson(dataDir, { model: 'm' });
    const bad = join(dataDir, 'bad.json');
    writeFileSync(bad, '[{"model": ');
    const results = await Promise.all([
      runCli(['pricing', 'import', notArray], { dataDir }),
      runCli(['pricing', 'import', bad], { dataDir }),
      runCli(['pricing', 'import', join(dataDir, 'missing.json')], { dataDir }),
    ]);
    assert.deepEqual(results.map((r) => r.code), [1, 1, 1]);
    assert.match(results[0].stderr, /must hold a JSON array of \{model, provider\?, input_price_per_million/);
    assert.match(results[1].stderr, /bad\.json is not valid JSON/);
    assert.match(results[2].stderr, /cannot read .*missing\.json/);
  });

  test('imports the bundled dataset without FILE, keeping a manual price', async () => {
    const dataDir = tempDir();
    await cliJson(['pricing', 'set', 'gpt-4o-mini', '--input', '1', '--output', '2'], { dataDir });
    const counts = await cliJson<Counts>(['pricing', 'import'], { dataDir });
    assert.ok(counts.inserted > 500, `${counts.inserted} rows`);
    assert.equal(counts.skippedManual, 1);
    const list = await cliJson<Row[]>(['pricing', 'list'], { dataDir });
    const byModel = new Map(list.map((r) => [r.model, r]));
    assert.deepEqual([byModel.get('gpt-4o-mini')?.input_price_per_million, byModel.get('gpt-4o-mini')?.source], [1, 'manual']);
    assert.deepEqual([byModel.get('gpt-4o')?.provider, byModel.get('gpt-4o')?.source], ['openai', 'import']);
    assert.equal(byModel.get('claude-3-5-haiku-latest')?.cache_write_price_per_million, 1);

    const second = await cliJson<Counts>(['pricing', 'import'], { dataDir });
    assert.deepEqual([second.inserted, second.updated, second.skippedManual], [0, counts.inserted, 1]);
  });
});
