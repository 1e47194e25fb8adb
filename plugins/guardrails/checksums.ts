/**
 * Checks that turn a number-shaped candidate into a payment card or an IBAN: the Luhn check digit
 * (ISO/IEC 7812-1, annex B), the card networks' IIN ranges and lengths, and the IBAN mod-97 check with
 * each country's length (ISO 13616 and SWIFT's IBAN registry). They read the candidate in place (digits
 * between `start` and `end`, separators skipped) so that a scan allocates nothing per candidate.
 */

const ZERO = 48;
const NINE = 57;
const UPPER_A = 65;
const UPPER_Z = 90;

function isDigitCode(code: number): boolean {
  return code >= ZERO && code <= NINE;
}

/** Whether the digits in `text[start, end)` (other characters skipped) pass the Luhn check. */
export function luhnValid(text: string, start: number, end: number): boolean {
  let sum = 0;
  let double = false;
  for (let i = end - 1; i >= start; i--) {
    const code = text.charCodeAt(i);
    if (!isDigitCode(code)) continue;
    let digit = code - ZERO;
    if (double) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
    double = !double;
  }
  return sum % 10 === 0;
}

/**
 * Whether a card number of `length` digits whose first six digits are `iin6` belongs to a network the
 * detector knows: Visa, Mastercard (51-55 and the 2-series 2221-2720), American Express, Discover,
 * JCB, Diners Club and UnionPay, each with the lengths it issues.
 */
export function knownCardPrefix(iin6: number, length: number): boolean {
  const d1 = Math.floor(iin6 / 100_000);
  const d2 = Math.floor(iin6 / 10_000);
  const d3 = Math.floor(iin6 / 1000);
  const d4 = Math.floor(iin6 / 100);
  if (d1 === 4) return length === 13 || length === 16 || length === 19;
  if ((d2 >= 51 && d2 <= 55) || (d4 >= 2221 && d4 <= 2720)) return length === 16;
  if (d2 === 34 || d2 === 37) return length === 15;
  const long = length >= 16 && length <= 19;
  if (d4 === 6011 || (d3 >= 644 && d3 <= 649) || d2 === 65) return long;
  if (d4 >= 3528 && d4 <= 3589) return long;
  if (d2 === 36 || d2 === 38 || d2 === 39 || (d3 >= 300 && d3 <= 305)) return length >= 14 && length <= 19;
  if (d2 === 62) return long;
  return false;
}

/**
 * IBAN length per country, from SWIFT's IBAN registry. A country missing here is checked by mod-97
 * alone, with a length between 15 and 34.
 */
const IBAN_LENGTHS: ReadonlyMap<string, number> = new Map(Object.entries({
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BR: 29, BY: 28, CH: 21, CR: 22,
  CY: 28, CZ: 24, DE: 22, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18, FO: 18, FR: 27, GB: 22, GE: 22,
  GI: 23, GL: 18, GR: 27, GT: 28, HR: 21, HU: 28, IE: 22, IL: 23, IQ: 23, IS: 26, IT: 27, JO: 30, KW: 30,
  KZ: 20, LB: 28, LC: 32, LI: 21, LT: 20, LU: 20, LV: 21, MC: 27, MD: 24, ME: 22, MK: 19, MR: 27, MT: 31,
  MU: 30, NL: 18, NO: 15, PK: 24, PL: 28, PS: 29, PT: 25, QA: 29, RO: 24, RS: 22, SA: 24, SC: 31, SE: 24,
  SI: 19, SK: 24, SM: 27, ST: 25, SV: 28, TL: 23, TN: 24, TR: 26, UA: 29, VA: 22, VG: 24, XK: 20,
}));

/** The registry length of a country's IBANs, or undefined when the country is not in the table. */
export function ibanLength(country: string): number | undefined {
  return IBAN_LENGTHS.get(country);
}

/** Folds one IBAN character into the running mod-97 remainder (a letter counts as two digits, A = 10). */
function mod97Step(remainder: number, code: number): number {
  if (isDigitCode(code)) return (remainder * 10 + code - ZERO) % 97;
  return (remainder * 100 + code - UPPER_A + 10) % 97;
}

/**
 * Whether the IBAN in `text[start, end)` (spaces skipped, upper case) passes ISO 13616's check: the
 * country code and check digits moved to the end, letters as 10-35, the number mod 97 equals 1.
 */
export function ibanValid(text: string, start: number, end: number): boolean {
  let remainder = 0;
  let head = 0;
  for (let i = start; i < end; i++) {
    const code = text.charCodeAt(i);
    if (code === 32) continue;
    // The first four characters (country, check digits) are folded in last.
    if (head < 4) {
      head++;
      continue;
    }
    if (!isDigitCode(code) && (code < UPPER_A || code > UPPER_Z)) return false;
    remainder = mod97Step(remainder, code);
  }
  let folded = 0;
  for (let i = start; folded < 4; i++) {
    const code = text.charCodeAt(i);
    if (code === 32) continue;
    remainder = mod97Step(remainder, code);
    folded++;
  }
  return remainder === 1;
}
