/**
 * The guardrails' detection engine (plugins/guardrails): each built-in detector on true positives and
 * near misses, operators' patterns, overlap resolution and redaction, and the stream redactor's
 * promise: for any chunking, its output is the whole text's redaction, so no fragment of a match
 * ever reaches the client. Adversarial inputs of ~100 KB check that no regex backtracks
 * catastrophically (they must return; nothing is timed).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILT_IN_DETECTORS, compilePattern, email, iban, paymentCard, phone, secret, type Detector } from '../../plugins/guardrails/detectors.ts';
import { findAll, redact } from '../../plugins/guardrails/redact.ts';
import { createStreamRedactor } from '../../plugins/guardrails/stream-redactor.ts';

/** The texts `detector` finds in `text`. */
function found(detector: Detector, text: string): string[] {
  return detector.find(text).map((m) => text.slice(m.start, m.end));
}

/** Deterministic PRNG (mulberry32), so a failing split can be replayed from its seed. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PEM = [
  '-----BEGIN RSA PRIVATE KEY-----',
  'MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu',
  'KUpRKfFLfRYC9AIKjbJTWit+CqvjWYzvQwECAwEAAQJAIJLixBy2qpFoS4DSmoEm',
  '-----END RSA PRIVATE KEY-----',
].join('\n');
const TOLLGATE_KEY = 'tg_' + 'Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWo'.slice(0, 43);

/** One of each kind, as the stream tests embed them: [detector, text]. */
const SAMPLES: ReadonlyArray<readonly [string, string]> = [
  ['email', 'jane.doe+billing@example.co.uk'],
  ['phone', '+44 20 7946 0958'],
  ['phone', '(415) 555-2671'],
  ['payment-card', '4111 1111 1111 1111'],
  ['payment-card', '378282246310005'],
  ['iban', 'DE89 3704 0044 0532 0130 00'],
  ['iban', 'GB82WEST12345698765432'],
  ['secret', 'sk-proj-Q3vXk9LmN2pR7sT1uW4yZ6bC8dE0fG5h'],
  ['secret', 'sk-ant-api03-Xy7Kp2Lm9Qr4St6Uv8Wx0Yz1Ab3Cd5Ef7Gh9Ij2Kl4Mn6Op8Qr0StAA'],
  ['secret', 'AKIAIOSFODNN7EXAMPLE'],
  ['secret', 'ghp_R4nD0mT0k3nV4lu3F0rT3st1ngPurp0s3s12'],
  ['secret', 'xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp'],
  ['secret', 'AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q'],
  ['secret', 'sk_live_4eC39HqLyjWDarjtT1zdp7dc'],
  ['secret', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'],
  ['secret', TOLLGATE_KEY],
  ['secret', PEM],
];

describe('built-in detectors', () => {
  test('email finds addresses and not things that only look like them', () => {
    assert.deepEqual(found(email, 'write to jane.doe+billing@example.co.uk, or ops@mail.acme.io.'), ['jane.doe+billing@example.co.uk', 'ops@mail.acme.io']);
    assert.deepEqual(found(email, 'user@localhost, a@b, foo@bar.c, @handle, name@'), []);
  });

  test('phone finds international and national forms with separators', () => {
    const text = 'call +1 415 555 2671, +14155552671, +44 (0)20 7946 0958, (415) 555-2671, 020 7946 0958, 06 12 34 56 78 or 415.555.2671';
    assert.deepEqual(found(phone, text), ['+1 415 555 2671', '+14155552671', '+44 (0)20 7946 0958', '(415) 555-2671', '020 7946 0958', '06 12 34 56 78', '415.555.2671']);
  });

  test('phone leaves ids, dates, versions, prices and addresses alone', () => {
    const text = 'order 4815162342 on 2024-01-15 10:30 (15.01.2024), v10.15.7 and 1.2.3, $1,234,567.89, 192.168.100.200, +12345';
    assert.deepEqual(found(phone, text), []);
  });

  test('payment-card finds Luhn-valid numbers of each network, spaced, dashed or compact', () => {
    const cards = ['4111 1111 1111 1111', '5555-5555-5555-4444', '2223003122003222', '378282246310005', '6011 1111 1111 1117', '3530111333300000', '30569309025904', '6200000000000005'];
    assert.deepEqual(found(paymentCard, `cards: ${cards.join(', ')}.`), cards);
  });

  test('payment-card rejects a wrong check digit, an unknown network and a longer run of digits', () => {
    // 1234 5678 9012 3452 passes Luhn but no network issues 1x numbers.
    assert.deepEqual(found(paymentCard, 'bad 4111 1111 1111 1112, 1234 5678 9012 3452, 41111111111111111111111, 4111111111111111abc'), []);
  });

  test('payment-card finds a card followed by another group of digits', () => {
    assert.deepEqual(found(paymentCard, 'card 4111 1111 1111 1111 123 exp'), ['4111 1111 1111 1111']);
  });

  test('iban finds mod-97-valid IBANs, grouped or compact, cut at their country length', () => {
    const text = 'pay DE89 3704 0044 0532 0130 00 EUR or GB82WEST12345698765432, FR14 2004 1010 0505 0001 3M02 606 and NL91ABNA0417164300.';
    assert.deepEqual(found(iban, text), ['DE89 3704 0044 0532 0130 00', 'GB82WEST12345698765432', 'FR14 2004 1010 0505 0001 3M02 606', 'NL91ABNA0417164300']);
  });

  test('iban rejects a wrong check digit and a wrong country length', () => {
    assert.deepEqual(found(iban, 'DE88 3704 0044 0532 0130 00, GB82WEST1234569876543, DE89370400440532013000X'), []);
  });

  test('secret finds each documented key and token format', () => {
    for (const [, sample] of SAMPLES.filter(([id]) => id === 'secret')) {
      assert.deepEqual(found(secret, `token: ${sample}\n`), [sample], sample);
    }
    const aws = 'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
    assert.deepEqual(found(secret, aws), ['wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY']);
  });

  test('secret leaves near misses alone', () => {
    const text = [
      'sk-short', 'task-management-system-for-everyone-here', 'AKIA123', 'ghp_tooShort', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      'eyJhbGciOiJIUzI1NiJ9 alone', 'tg_tooshort', '-----BEGIN PUBLIC KEY-----\nMFww\n-----END PUBLIC KEY-----',
      '-----BEGIN PRIVATE KEY-----\nMIIB (never ended)',
    ].join(' ');
    assert.deepEqual(found(secret, text), []);
  });

  test('every detector honours its maxMatchChars and resumes a scan mid-text as a whole scan does', () => {
    const text = SAMPLES.map(([, s]) => `x ${s} y`).join(' and ');
    for (const detector of BUILT_IN_DETECTORS) {
      const all = detector.find(text);
      assert.ok(all.length > 0, detector.id);
      for (const m of all) assert.ok(m.end - m.start <= detector.maxMatchChars, detector.id);
      const from = all[all.length - 1]!.start;
      assert.deepEqual(detector.find(text, from), all.slice(-1), detector.id);
    }
  });
});

describe('compilePattern', () => {
  test('compiles an operator regex into a global detector with its id and window', () => {
    const order = compilePattern('ORD-\\d{6}', 'i', { id: 'order', maxMatchChars: 10 });
    assert.equal(order.maxMatchChars, 10);
    assert.deepEqual(order.find('ord-123456 and ORD-654321'), [
      { start: 0, end: 10, detector: 'order' },
      { start: 15, end: 25, detector: 'order' },
    ]);
  });

  test('refuses a match longer than maxMatchChars and tries again one character later', () => {
    assert.deepEqual(compilePattern('a+', '', { maxMatchChars: 3 }).find('aa aaaaa'), [
      { start: 0, end: 2, detector: 'custom' },
      { start: 5, end: 8, detector: 'custom' },
    ]);
  });

  test('rejects invalid patterns with a message naming the problem', () => {
    const cases: Array<[string, string, object, string]> = [
      ['(', '', {}, 'pattern /(/ is not a valid regular expression: Invalid regular expression: /(/g: Unterminated group'],
      ['abc', 'y', {}, 'pattern /abc/: flags "y" are not allowed (use any of i, m, s, u, v)'],
      ['a*', '', {}, 'pattern /a*/ matches the empty string'],
      ['abc', '', { maxMatchChars: 0 }, 'pattern /abc/: maxMatchChars must be an integer from 1 to 65536, got 0'],
    ];
    for (const [source, flags, options, message] of cases) {
      assert.throws(() => compilePattern(source, flags, options), { message });
    }
  });
});

describe('findAll and redact', () => {
  test('redacts every kind with the default replacement', () => {
    const text = SAMPLES.map(([, s]) => `see ${s}.`).join('\n');
    const expected = SAMPLES.map(([id]) => `see [REDACTED:${id}].`).join('\n');
    assert.equal(redact(text, findAll(text, BUILT_IN_DETECTORS)), expected);
  });

  test('the earliest match wins; an overlapping later one keeps only its overhang; one inside is dropped', () => {
    const a = compilePattern('abcdef', '', { id: 'a', maxMatchChars: 6 });
    const b = compilePattern('defghi', '', { id: 'b', maxMatchChars: 6 });
    const c = compilePattern('bcd', '', { id: 'c', maxMatchChars: 3 });
    const text = '_abcdefghi_';
    assert.deepEqual(findAll(text, [b, c, a]), [
      { start: 1, end: 7, detector: 'a' },
      { start: 7, end: 10, detector: 'b' },
    ]);
    assert.equal(redact(text, findAll(text, [a, b, c]), (m) => `<${m.detector}>`), '_<a><b>_');
  });

  test('at the same start the longest wins', () => {
    const short = compilePattern('abc', '', { id: 'short', maxMatchChars: 3 });
    const long = compilePattern('abcdef', '', { id: 'long', maxMatchChars: 6 });
    assert.deepEqual(findAll('abcdef', [short, long]), [{ start: 0, end: 6, detector: 'long' }]);
  });

  test('a text without matches comes back unchanged', () => {
    const text = 'nothing to see here, version 1.2.3 released 2024-01-15';
    assert.equal(redact(text, findAll(text, BUILT_IN_DETECTORS)), text);
  });
});

/** Streams `text` in the given chunks; returns the outputs, checking the held text after each push. */
function streamChunks(detectors: readonly Detector[], chunks: readonly string[]): string[] {
  const redactor = createStreamRedactor(detectors);
  const outputs: string[] = [];
  for (const chunk of chunks) {
    outputs.push(redactor.push(chunk));
    assert.ok(redactor.pendingChars <= redactor.windowChars, `held ${redactor.pendingChars} > window ${redactor.windowChars}`);
  }
  outputs.push(redactor.flush());
  assert.equal(redactor.pendingChars, 0);
  return outputs;
}

/** `text` cut at random points: chunk sizes from 1 to `maxChunk`. */
function randomSplit(text: string, random: () => number, maxChunk: number): string[] {
  const chunks: string[] = [];
  for (let at = 0; at < text.length;) {
    const size = 1 + Math.floor(random() * maxChunk);
    chunks.push(text.slice(at, at + size));
    at += size;
  }
  return chunks;
}

/** Asserts that no 8-character piece of any sample appears in `output`. */
function assertNoFragment(output: string): void {
  for (const [, sample] of SAMPLES) {
    for (let i = 0; i + 8 <= sample.length; i++) {
      const piece = sample.slice(i, i + 8);
      assert.ok(!output.includes(piece), `fragment ${JSON.stringify(piece)} of ${JSON.stringify(sample)} leaked`);
    }
  }
}

describe('stream redactor', () => {
  const filler = ['Hello there, ', 'here is what you asked for: ', 'see below. ', '\n', 'Thanks! '];
  const order = compilePattern('ORDER-[A-Z]{6}', '', { id: 'order', maxMatchChars: 12 });
  const detectors = [...BUILT_IN_DETECTORS, order];

  /** Filler and every sample, in an order and with filler picked by `random`. */
  function document(random: () => number): string {
    let text = '';
    for (const [, sample] of [...SAMPLES, ['order', 'ORDER-QWERTY'] as const]) {
      text += filler[Math.floor(random() * filler.length)]! + sample + ' ';
    }
    return text;
  }

  test('any chunking gives the whole text\'s redaction, and no fragment of a secret gets out', () => {
    for (let seed = 1; seed <= 150; seed++) {
      const random = prng(seed);
      const text = document(random);
      const expected = redact(text, findAll(text, detectors));
      const maxChunk = [2, 8, 40, 300, 5000][seed % 5]!;
      const outputs = streamChunks(detectors, randomSplit(text, random, maxChunk));
      assert.equal(outputs.join(''), expected, `seed ${seed}`);
      assertNoFragment(outputs.join(''));
    }
  });

  test('any chunking resolves chains of overlapping matches as the whole text does', () => {
    const overlapping = [
      compilePattern('abcdef', '', { id: 'a', maxMatchChars: 6 }),
      compilePattern('defghijk', '', { id: 'b', maxMatchChars: 8 }),
      compilePattern('cde', '', { id: 'c', maxMatchChars: 3 }),
      compilePattern('ijk[a-z]{0,12}', '', { id: 'd', maxMatchChars: 15 }),
    ];
    for (let seed = 1; seed <= 100; seed++) {
      const random = prng(seed);
      let text = '';
      while (text.length < 400) {
        const from = Math.floor(random() * 12);
        text += 'abcdefghijklmnop'.slice(from, from + 2 + Math.floor(random() * 14)) + (random() < 0.3 ? ' ' : '');
      }
      const expected = redact(text, findAll(text, overlapping));
      assert.equal(streamChunks(overlapping, randomSplit(text, random, 1 + (seed % 20))).join(''), expected, `seed ${seed}`);
    }
  });

  test('one character at a time gives the whole text\'s redaction', () => {
    const text = document(prng(7));
    const outputs = streamChunks(detectors, [...text]);
    assert.equal(outputs.join(''), redact(text, findAll(text, detectors)));
  });

  test('a secret split across two chunks is redacted whole, wherever the cut falls', () => {
    for (const [id, sample] of SAMPLES) {
      const text = `key: ${sample} end`;
      for (let cut = 1; cut < text.length; cut += Math.max(1, Math.floor(text.length / 40))) {
        const outputs = streamChunks(detectors, [text.slice(0, cut), text.slice(cut)]);
        assert.equal(outputs.join(''), `key: [REDACTED:${id}] end`, `${id} cut at ${cut}`);
      }
    }
  });

  test('an AWS secret after its label is redacted wherever the cut falls, the label kept', () => {
    const text = 'aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"\n';
    for (let cut = 1; cut < text.length; cut++) {
      const outputs = streamChunks(detectors, [text.slice(0, cut), text.slice(cut)]);
      assert.equal(outputs.join(''), 'aws_secret_access_key = "[REDACTED:secret]"\n', `cut at ${cut}`);
    }
    assert.equal(streamChunks(detectors, [...text]).join(''), 'aws_secret_access_key = "[REDACTED:secret]"\n');
  });

  test('holds back no more than a phone number\'s width of plain prose', () => {
    const redactor = createStreamRedactor(BUILT_IN_DETECTORS);
    const prose = 'The quick brown fox jumps over the lazy dog, version 1.2.3, a task-list, risk-free, twice. '.repeat(40);
    let out = '';
    for (const chunk of randomSplit(prose, prng(11), 6)) {
      out += redactor.push(chunk);
      assert.ok(redactor.pendingChars <= phone.maxMatchChars, `held ${redactor.pendingChars}`);
    }
    assert.equal(out + redactor.flush(), prose);
  });

  test('holds an unfinished secret from its first character until it can decide', () => {
    const redactor = createStreamRedactor(BUILT_IN_DETECTORS);
    let out = redactor.push('x'.repeat(200) + ' my key is s');
    assert.ok(!out.includes(' s'), out.slice(-20));
    out += redactor.push('k-proj-Q3vXk9LmN2pR7sT1uW4yZ6bC8dE0fG5h');
    assert.ok(!out.includes('sk-'));
    out += redactor.push(' and more text. '.repeat(400));
    assert.ok(out.includes('my key is [REDACTED:secret] and more text.'));
    out += redactor.flush();
    assert.equal(out, 'x'.repeat(200) + ' my key is [REDACTED:secret]' + ' and more text. '.repeat(400));
  });

  test('releases text early once no match can cover it', () => {
    const redactor = createStreamRedactor([order]);
    assert.equal(redactor.push('abcdefghijklmnopqrstuvwxyz '), 'abcdefghijklmno');
    assert.equal(redactor.pendingChars, 12);
    assert.equal(redactor.push('ORDER-'), 'pqrstu');
    assert.equal(redactor.push('ABCDEF tail'), 'vwxyz [REDACTED:order]');
    assert.equal(redactor.flush(), ' tail');
  });

  test('a redaction that crosses the window\'s edge is released whole, not cut', () => {
    const a = compilePattern('abcdef', '', { id: 'a', maxMatchChars: 6 });
    const b = compilePattern('defghijklm', '', { id: 'b', maxMatchChars: 10 });
    const text = '..abcdefghijklm..';
    for (let cut = 1; cut < text.length; cut++) {
      const outputs = streamChunks([a, b], [text.slice(0, cut), text.slice(cut)]);
      assert.equal(outputs.join(''), '..[REDACTED:a][REDACTED:b]..', `cut at ${cut}`);
    }
  });

  test('never returns half of a surrogate pair while the stream goes on', () => {
    const text = 'emoji 😀 and 🎉 '.repeat(30) + 'mail jane@example.com 😀';
    const chunks = text.match(/[\s\S]{1,3}/g)!;
    const outputs = streamChunks(BUILT_IN_DETECTORS, chunks);
    for (const output of outputs.slice(0, -1)) assert.ok(!/[\uD800-\uDBFF]$/.test(output), JSON.stringify(output));
    assert.equal(outputs.join(''), text.replace('jane@example.com', '[REDACTED:email]'));
  });

  test('without detectors every chunk passes through at once', () => {
    const redactor = createStreamRedactor([]);
    assert.equal(redactor.push('sk-proj-Q3vXk9LmN2pR7sT1uW4yZ6bC8dE0fG5h'), 'sk-proj-Q3vXk9LmN2pR7sT1uW4yZ6bC8dE0fG5h');
    assert.equal(redactor.flush(), '');
  });

  test('refuses a push after flush', () => {
    const redactor = createStreamRedactor(BUILT_IN_DETECTORS);
    redactor.flush();
    assert.throws(() => redactor.push('x'), { message: 'stream redactor: push after flush' });
  });
});

describe('adversarial inputs of ~100 KB', () => {
  const SIZE = 100_000;
  const inputs: Array<[string, string]> = [
    ['digits', '1'.repeat(SIZE)],
    ['spaced digits', '4111 '.repeat(SIZE / 5)],
    ['dashed digits', '12-'.repeat(SIZE / 3)],
    ['plus digits', '+1234567890123456'.repeat(SIZE / 17)],
    ['at signs', 'a@'.repeat(SIZE / 2)],
    ['dotted labels', 'x@' + 'a.'.repeat(SIZE / 2)],
    ['local part', 'a'.repeat(SIZE) + '@'],
    ['long domain label', 'x@' + 'a'.repeat(SIZE)],
    ['hyphenated labels', 'x@' + 'a-'.repeat(SIZE / 2)],
    ['sk-', 'sk-'.repeat(SIZE / 3)],
    ['sk- spaced', 'sk- '.repeat(SIZE / 4)],
    ['eyJ', 'eyJ.'.repeat(SIZE / 4)],
    ['PEM begins', '-----BEGIN PRIVATE KEY-----\n'.repeat(SIZE / 28)],
    ['PEM body', '-----BEGIN PRIVATE KEY-----\n' + 'A'.repeat(SIZE)],
    ['dashes', '-'.repeat(SIZE)],
    ['IBAN groups', 'DE89 '.repeat(SIZE / 5)],
    ['aws labels', 'aws_secret_access_key='.repeat(SIZE / 22)],
    ['parentheses', '(12) '.repeat(SIZE / 5)],
  ];

  for (const [name, input] of inputs) {
    test(`every detector returns on ${name}`, () => {
      for (const detector of BUILT_IN_DETECTORS) {
        const matches = detector.find(input);
        for (const m of matches) assert.ok(m.end - m.start <= detector.maxMatchChars, `${detector.id} on ${name}`);
      }
      const matches = findAll(input, BUILT_IN_DETECTORS);
      assert.equal(redact(input, matches).length >= 0, true);
    });
  }

  test('finds nothing in runs that only resemble matches', () => {
    for (const [name, input] of inputs) {
      assert.deepEqual(findAll(input, BUILT_IN_DETECTORS), [], name);
    }
  });

  test('the stream redactor gets through 100 KB of lookalikes in small chunks', () => {
    const input = 'sk-'.repeat(SIZE / 6) + '4111 '.repeat(SIZE / 10);
    const outputs = streamChunks(BUILT_IN_DETECTORS, randomSplit(input, prng(3), 64));
    assert.equal(outputs.join(''), redact(input, findAll(input, BUILT_IN_DETECTORS)));
  });
});
