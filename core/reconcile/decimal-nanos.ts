/**
 * Exact conversion of a provider's decimal money amount to integer nano-USD. Cost reports give
 * amounts as decimal text (Anthropic: a string of cents, `"123.78912"`) or as a JSON number (OpenAI's
 * `amount.value`, read as the shortest decimal that round-trips, which is the decimal the provider
 * wrote): the digits are shifted as text, so no float ever touches the sum.
 */

const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/**
 * `amount` (decimal text or a number) × 10^`scale` as nano-USD, rounded half away from zero at the
 * nano. `scale`: 9 for USD, 7 for cents. Throws `RangeError` for text that is not a decimal number or a
 * result beyond `Number.MAX_SAFE_INTEGER`.
 */
export function decimalToNanos(amount: string | number, scale: number): number {
  const text = typeof amount === 'number' ? numberText(amount) : amount.trim();
  const match = DECIMAL.exec(text);
  if (!match || (match[2] === '' && (match[3] ?? '') === '')) throw new RangeError(`not a decimal amount: ${JSON.stringify(amount)}`);
  const [, sign, whole, fraction = '', exponent = '0'] = match;
  const shift = scale + Number(exponent);
  const digits = `${whole}${fraction}`;
  // The decimal point sits after `whole.length + shift` digits of `digits`.
  const point = whole!.length + shift;
  let integer: bigint;
  if (point <= 0) integer = roundUp(0n, digits.padStart(-point + digits.length, '0'));
  else if (point >= digits.length) integer = BigInt(digits.padEnd(point, '0') || '0');
  else integer = roundUp(BigInt(digits.slice(0, point) || '0'), digits.slice(point));
  if (integer > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`amount too large: ${JSON.stringify(amount)}`);
  const nanos = Number(integer);
  return sign === '-' ? -nanos : nanos;
}

/** `integer` plus one when the dropped digits `rest` are half or more (half away from zero). */
function roundUp(integer: bigint, rest: string): bigint {
  return rest.length > 0 && rest.charCodeAt(0) >= 53 /* '5' */ ? integer + 1n : integer;
}

/** A finite number as its shortest round-trip decimal text. */
function numberText(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`not a finite amount: ${value}`);
  return String(value);
}

/** Integer nano-USD as a USD decimal text with up to 9 fraction digits, trailing zeros dropped (`1500000000` → `1.5`). */
export function nanosToUsdText(nanos: number): string {
  const sign = nanos < 0 ? '-' : '';
  const abs = Math.abs(nanos);
  const whole = Math.floor(abs / 1e9);
  const fraction = String(abs % 1e9).padStart(9, '0').replace(/0+$/, '');
  return `${sign}${whole}${fraction ? `.${fraction}` : ''}`;
}
