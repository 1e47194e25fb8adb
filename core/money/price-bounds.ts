/**
 * The one rule every price input follows (`tollgate pricing set`, the admin pricing API, imports from
 * a file or the bundled dataset, all through `validatePrice` in `price-table.ts`): a finite number of
 * USD per million tokens from 0 to `MAX_USD_PER_MILLION`. The bound keeps cost arithmetic in safe
 * integers (`cost.ts`): 10,000,000 tokens (`MAX_REPORTED_TOKENS`) at $100,000 per million is
 * 1e15 nano-USD per part, four parts stay below 2^53. The dearest real model is about $600/M.
 */

/** The highest accepted price, USD per million tokens. */
export const MAX_USD_PER_MILLION = 100_000;

/**
 * Why `value` is not an acceptable USD-per-million price, as words to follow "must be" / "got",
 * or null when it is one.
 */
export function usdPerMillionProblem(value: unknown): string | null {
  if (typeof value !== 'number' || !Number.isFinite(value)) return 'is not a finite number';
  if (value < 0) return 'is negative';
  if (value > MAX_USD_PER_MILLION) return `is above the ${MAX_USD_PER_MILLION.toLocaleString('en-US')} USD per million tokens a price may be`;
  return null;
}
