/**
 * `node --import tsx bench/token-estimate.ts`: the bounded token count (core/tokens/bounded-token-count.ts)
 * against the exact o200k count on a small corpus from files on disk, each text 200,000 characters
 * (repeated where shorter): Chinese (TypeScript's zh-cn diagnostic messages), TypeScript code (core/),
 * English (docs/*.md), JSON (package-lock.json), and random CJK without punctuation (the adversarial
 * case, at 20,000 characters since its exact count is quadratic). Prints the error and both times.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createTokenMeter } from '../core/tokens/bounded-token-count.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base');
const LENGTH = 200_000;

const sized = (text: string, length = LENGTH) => text.repeat(Math.ceil(length / text.length)).slice(0, length);
const filesIn = (dir: string, ext: string) => readdirSync(root + dir).filter((f) => f.endsWith(ext)).map((f) => readFileSync(`${root}${dir}/${f}`, 'utf8')).join('\n');
const zhMessages = Object.values(JSON.parse(readFileSync(`${root}node_modules/typescript/lib/zh-cn/diagnosticMessages.generated.json`, 'utf8')) as Record<string, string>).join('\n');
let seed = 7;
const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
const cjkRun = Array.from({ length: 20_000 }, () => String.fromCharCode(0x4e00 + Math.floor(random() * 3000))).join('');

const corpus: Array<[string, string]> = [
  ['chinese', sized(zhMessages)],
  ['code', sized(filesIn('core', '.ts'))],
  ['english', sized(filesIn('docs', '.md'))],
  ['json', sized(readFileSync(`${root}package-lock.json`, 'utf8'))],
  ['cjk-run', cjkRun],
  ['english-small', filesIn('docs', '.md').slice(0, 20_000)],
];
for (const [name, text] of corpus) {
  let started = performance.now();
  const exact = countTokens(text);
  const exactMs = performance.now() - started;
  started = performance.now();
  const estimate = createTokenMeter(countTokens).count(text);
  const boundedMs = performance.now() - started;
  const errorPct = ((estimate - exact) / exact) * 100;
  console.log(`${name.padEnd(14)} chars ${String(text.length).padStart(7)}  exact ${String(exact).padStart(7)} (${exactMs.toFixed(0)} ms)  bounded ${String(estimate).padStart(7)} (${boundedMs.toFixed(1)} ms)  error ${errorPct.toFixed(2)}%`);
}
