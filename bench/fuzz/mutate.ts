/**
 * Mutations of request bodies: one field of a valid body replaced by a hostile value, removed, or
 * joined by an unknown sibling (the grammar-based cases), and whole-body damage (truncated, not
 * JSON, not UTF-8, nested beyond any parser's stack, prototype keys). Values that JSON.stringify
 * cannot write (1e400, raw nesting) go in as a placeholder string replaced in the serialized text.
 */
import type { Rng } from './prng.ts';

type Json = Record<string, unknown>;
type Path = Array<string | number>;

/** A serialized body and what was done to it, for the finding's description. */
export interface MutatedBody {
  bytes: Buffer;
  mutation: string;
  /** True when the contract answers the body 400 whatever else the request holds (not JSON, not an object, nested too deep). */
  malformed?: boolean;
}

const RAW = '\u0001RAW\u0001';

/** `[[[…]]]` nested `depth` levels. */
export const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);

const CJK = '漢字かなカナ한국어';

/** Hostile replacement values: [label, value or a RAW text]. */
function hostileValue(rng: Rng): [string, unknown, string?] {
  return rng.weighted<[string, unknown, string?]>([
    [3, ['null', null]], [2, ['true', true]], [2, ['0', 0]], [2, ['-1', -1]], [2, ['1e308', 1e308]], [2, ['-1e308', -1e308]],
    [1, ['1.5', 1.5]], [1, ['2^53+1', 2 ** 53 + 1]], [1, ['-0', -0]], [2, ['""', '']], [2, ['"x"', 'x']], [2, ['[]', []]],
    [2, ['{}', {}]], [1, ['[null]', [null]]], [1, ['{"a":1}', { a: 1 }]], [2, ['"NaN"', 'NaN']], [1, ['"Infinity"', 'Infinity']],
    [1, ['"-1"', '-1']], [1, ['"1e999"', '1e999']],
    [1, ['1e400', RAW, '1e400']], [1, ['-1e400', RAW, '-1e400']], [1, ['1e-400', RAW, '1e-400']], [1, ['30-digit int', RAW, '123456789012345678901234567890']],
    [2, ['lone surrogate', 'a\ud800b\udfffc']], [1, ['raw lone surrogate escape', RAW, '"\\ud800\\udc00\\udbff"']], [2, ['NUL', 'a\u0000b']],
    [1, ['control chars', '\u0001\u0002\u001b[31m\r\n\t']], [1, ['bidi + zero width', '\u202e\u200b\u2066abc\ufeff']], [1, ['emoji', '👩‍👩‍👧‍👦🏳️‍🌈'.repeat(50)]],
    [2, ['100k string', 'a'.repeat(100_000)]], [2, ['30k CJK', CJK.repeat(3_000)]], [1, ['20k spaces', ' '.repeat(20_000)]],
    [1, ['10k-element array', new Array(10_000).fill(0)]], [1, ['5k-message array', new Array(5_000).fill({ role: 'user', content: 'hi' })]],
    [1, ['1k-key object', Object.fromEntries(Array.from({ length: 1_000 }, (_, i) => [`k${i}`, i]))]],
    [1, ['nested 100', RAW, nested(100)]], [1, ['nested 5000', RAW, nested(5_000)]], [1, ['nested objects 3000', RAW, '{"a":'.repeat(3_000) + '1' + '}'.repeat(3_000)]],
    [1, ['__proto__ object', RAW, '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}']],
    [1, ['path-like string', '../../../../etc/passwd']], [1, ['sql-like string', "x'; DROP TABLE users; --"]],
    [1, ['provider prefix only', 'openai/']], [1, ['slashes', '/////']],
  ]);
}

/** Every path to a value in `value` (objects and arrays), the root excluded. */
function pathsOf(value: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  if (Array.isArray(value)) value.forEach((item, i) => (out.push([...prefix, i]), pathsOf(item, [...prefix, i], out)));
  else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      out.push([...prefix, key]);
      pathsOf(item, [...prefix, key], out);
    }
  }
  return out;
}

function parentOf(root: Json, path: Path): Record<string | number, unknown> {
  let node: unknown = root;
  for (const part of path.slice(0, -1)) node = (node as Record<string | number, unknown>)[part];
  return node as Record<string | number, unknown>;
}

function serialize(body: unknown, raw: string | undefined): Buffer {
  const text = JSON.stringify(body);
  return Buffer.from(raw === undefined ? text : text.replace(JSON.stringify(RAW), () => raw), 'utf8');
}

/** One field of `valid` (a deep copy is changed) replaced, removed, or given an unknown sibling. */
export function mutateField(rng: Rng, valid: Json): MutatedBody {
  const body = structuredClone(valid);
  const paths = pathsOf(body);
  const path = rng.pick(paths);
  const parent = parentOf(body, path);
  const key = path[path.length - 1]!;
  const where = path.join('.');
  const action = rng.weighted([[6, 'replace'], [2, 'remove'], [1, 'unknown'], [1, 'model']] as const);
  if (action === 'remove') {
    if (Array.isArray(parent)) parent.splice(key as number, 1);
    else delete parent[key];
    return { bytes: serialize(body, undefined), mutation: `removed ${where}` };
  }
  if (action === 'unknown') {
    const target = Array.isArray(parent) ? body : parent;
    const [label, value, raw] = hostileValue(rng);
    target[rng.pick(['x_fuzz', '__proto__', 'constructor', 'toString', 'hasOwnProperty', ''])] = value;
    return { bytes: serialize(body, raw), mutation: `unknown field beside ${where} = ${label}` };
  }
  const [label, value, raw] = hostileValue(rng);
  if (action === 'model') {
    body.model = value;
    return { bytes: serialize(body, raw), mutation: `model = ${label}` };
  }
  parent[key] = value;
  return { bytes: serialize(body, raw), mutation: `${where} = ${label}` };
}

const REFUSED_BODIES = new Set(['truncated', 'empty', 'whitespace', 'null', 'array', 'string', 'number', 'trailing garbage', 'nested 20000', 'nested 100000', 'comments', 'ndjson', 'NaN literal']);

/** Damage to the whole body; `valid` gives the text to cut or corrupt. */
export function mutateWhole(rng: Rng, valid: Json): MutatedBody {
  const text = JSON.stringify(valid);
  const kind = rng.weighted([
    [4, 'truncated'], [2, 'flipped bytes'], [1, 'empty'], [1, 'whitespace'], [1, 'null'], [1, 'array'], [1, 'string'], [1, 'number'],
    [2, 'invalid utf-8'], [1, 'bom'], [1, 'duplicate keys'], [1, 'trailing garbage'], [1, 'nested 20000'], [1, 'nested 100000'],
    [1, 'comments'], [1, 'ndjson'], [1, 'proto keys'], [1, 'NaN literal'],
  ] as const);
  const bytes = ((): Buffer => {
    switch (kind) {
      case 'truncated': return Buffer.from(text.slice(0, rng.int(text.length)));
      case 'flipped bytes': {
        const buf = Buffer.from(text);
        for (let i = 0; i < 1 + rng.int(4); i++) buf[rng.int(buf.length)] = rng.int(256);
        return buf;
      }
      case 'empty': return Buffer.alloc(0);
      case 'whitespace': return Buffer.from(' \n\t\r ');
      case 'null': return Buffer.from('null');
      case 'array': return Buffer.from(`[${text}]`);
      case 'string': return Buffer.from(JSON.stringify(text));
      case 'number': return Buffer.from('1e400');
      case 'invalid utf-8': return Buffer.concat([Buffer.from(text.slice(0, -2)), Buffer.from([0xff, 0xfe, 0xc0, 0xaf, 0xed, 0xa0, 0x80]), Buffer.from('"}')]);
      case 'bom': return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]);
      case 'duplicate keys': return Buffer.from(`{"model":{"a":[1]},${text.slice(1)}`);
      case 'trailing garbage': return Buffer.from(`${text}}}]]garbage`);
      case 'nested 20000': return Buffer.from(`{"model":"openai/gpt-4o-mini","messages":${nested(20_000)}}`);
      case 'nested 100000': return Buffer.from(nested(100_000));
      case 'comments': return Buffer.from(`// a comment\n${text}`);
      case 'ndjson': return Buffer.from(`${text}\n${text}\n`);
      case 'proto keys': return Buffer.from(`{"__proto__":{"model":"openai/gpt-4o-mini","isAdmin":true},${text.slice(1)}`);
      case 'NaN literal': return Buffer.from(text.replace(/}$/, ',"temperature":NaN}'));
    }
  })();
  return { bytes, mutation: `whole body: ${kind}`, malformed: REFUSED_BODIES.has(kind) };
}
