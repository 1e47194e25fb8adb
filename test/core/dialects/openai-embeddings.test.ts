/**
 * The `openai-embeddings` dialect (core/dialects/openai-embeddings/): the request schema as a table
 * of accepted and refused bodies with their exact messages, the normalization to the canonical
 * `EmbeddingRequest`, and OpenAI's base64 encoding as openai-node decodes it.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openAIEmbeddings } from '../../../core/dialects/openai-embeddings/index.ts';
import { vectorFromBase64, vectorToBase64 } from '../../../core/canonical/embedding-types.ts';
import { embeddingRequestOf } from '../../../core/canonical/canonical-request.ts';
import { GatewayError } from '../../../core/errors.ts';
import type { Exchange } from '../../../core/exchange.ts';

/** openai-node's `toFloat32Array` (src/internal/utils/base64.ts; not exported by the package), as it runs on Node. */
function toFloat32Array(base64: string): number[] {
  const buf = Buffer.from(base64, 'base64');
  return Array.from(new Float32Array(buf.buffer, buf.byteOffset, buf.length / Float32Array.BYTES_PER_ELEMENT));
}

const model = 'openai/text-embedding-3-small';
const parse = (body: unknown) => openAIEmbeddings.parseRequest(body, 'embeddings.create');

function refusal(body: unknown): { message: string; param: string | null } {
  try {
    parse(body);
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    assert.equal(err.status, 400);
    assert.equal(err.code, 'invalid_request');
    return { message: err.message, param: err.param };
  }
  assert.fail(`accepted ${JSON.stringify(body)}`);
}

describe('openai-embeddings request schema', () => {
  test('normalizes every input form to a list, with the defaults', () => {
    const cases: Array<[unknown, unknown]> = [
      ['one text', ['one text']],
      [['a', 'b'], ['a', 'b']],
      [[1, 2, 3], [[1, 2, 3]]],
      [[[1, 2], [3]], [[1, 2], [3]]],
    ];
    for (const [input, normalized] of cases) {
      const parsed = parse({ model, input });
      assert.deepEqual(parsed.canonical, { model, input: normalized, dimensions: null, encodingFormat: 'float' });
      assert.equal(parsed.stream, false);
    }
  });

  test('keeps dimensions, encoding_format and user; the client body is forwarded as sent', () => {
    const body = { model, input: 'x', dimensions: 256, encoding_format: 'base64', user: 'u-1' };
    const parsed = parse(body);
    assert.deepEqual(parsed.canonical, { model, input: ['x'], dimensions: 256, encodingFormat: 'base64' });
    assert.deepEqual(parsed.body, body);
  });

  test('refuses what OpenAI refuses, naming the field', () => {
    const cases: Array<[unknown, string, string]> = [
      [{ input: 'x' }, 'Missing required field "model".', 'model'],
      [{ model: '', input: 'x' }, 'Invalid value for "model": must NOT have fewer than 1 characters.', 'model'],
      [{ model }, 'Missing required field "input".', 'input'],
      [{ model, input: '' }, '"input" is an empty string; send some text to embed.', 'input'],
      [{ model, input: [] }, '"input" is an empty array; send at least one input.', 'input'],
      [{ model, input: ['a', ''] }, '"input[1]" is an empty string; send some text to embed.', 'input[1]'],
      [{ model, input: ['a', 1] }, '"input[1]" must be a string, like the other inputs.', 'input[1]'],
      [{ model, input: [1, -2] }, '"input[1]" must be a token id (an integer ≥ 0).', 'input[1]'],
      [{ model, input: [1, 2.5] }, '"input[1]" must be a token id (an integer ≥ 0).', 'input[1]'],
      [{ model, input: [[1], []] }, '"input[1]" is an empty array of token ids; send at least one.', 'input[1]'],
      [{ model, input: [[1], 'a'] }, '"input[1]" must be an array of token ids, like the other inputs.', 'input[1]'],
      [{ model, input: [{ text: 'a' }] }, '"input[0]" is neither text nor token ids; "input" must be a string, an array of strings, an array of token ids, or an array of token-id arrays.', 'input[0]'],
      [{ model, input: 42 }, '"input" must be a string, an array of strings, an array of token ids, or an array of token-id arrays.', 'input'],
      [{ model, input: Array(2049).fill('a') }, '"input" has 2049 inputs; at most 2048 are allowed per request. Split it into several requests.', 'input'],
      [{ model, input: 'x', dimensions: 0 }, 'Invalid value for "dimensions": must be >= 1.', 'dimensions'],
      [{ model, input: 'x', dimensions: 1.5 }, 'Invalid value for "dimensions": must be integer.', 'dimensions'],
      [{ model, input: 'x', encoding_format: 'int8' }, 'Invalid value for "encoding_format": must be one of "float", "base64".', 'encoding_format'],
      [{ model, input: 'x', stream: true }, 'Embeddings are not streamed; leave out "stream".', 'stream'],
      [{ model, input: 'x', stream: false }, 'Embeddings are not streamed; leave out "stream".', 'stream'],
      [[], 'The request body must be a JSON object.', null as unknown as string],
    ];
    for (const [body, message, param] of cases) assert.deepEqual(refusal(body), { message, param }, JSON.stringify(body).slice(0, 80));
  });

  test('accepts 2048 inputs', () => {
    assert.equal((embeddingRequestOf(parse({ model, input: Array(2048).fill('a') }).canonical)!.input as string[]).length, 2048);
  });
});

describe('openai-embeddings rendering', () => {
  const exchange = (encodingFormat: 'float' | 'base64') => ({
    request: { model, input: ['a', 'b'], dimensions: null, encodingFormat },
    target: { provider: 'gemini', model: 'gemini-embedding-001' },
    usage: { promptTokens: 7, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0 },
  }) as unknown as Exchange;
  const result = { vectors: [[0.5, -0.25, 0.1], [1e-8, 3, -7.75]], model: '', promptTokens: null };

  test('float: OpenAI\'s CreateEmbeddingResponse with the vectors as numbers and the billed usage', () => {
    const body = JSON.parse(openAIEmbeddings.createRenderer(exchange('float')).embeddings!(result));
    assert.deepEqual(body, {
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: [0.5, -0.25, 0.1] }, { object: 'embedding', index: 1, embedding: [1e-8, 3, -7.75] }],
      model: 'gemini-embedding-001',
      usage: { prompt_tokens: 7, total_tokens: 7 },
    });
  });

  test('base64: little-endian float32s that openai-node\'s decoder reads back as the float32 values', () => {
    const body = JSON.parse(openAIEmbeddings.createRenderer(exchange('base64')).embeddings!(result)) as { data: Array<{ embedding: string }> };
    for (const [i, vector] of result.vectors.entries()) {
      const encoded = body.data[i]!.embedding;
      assert.equal(typeof encoded, 'string');
      assert.deepEqual(toFloat32Array(encoded), Array.from(Float32Array.from(vector)));
    }
    // The exact bytes of 0.5, -0.25 as float32 little-endian.
    assert.equal(vectorToBase64([0.5, -0.25]), Buffer.from([0, 0, 0, 0x3f, 0, 0, 0x80, 0xbe]).toString('base64'));
    assert.deepEqual(vectorFromBase64(vectorToBase64([0.5, -0.25, 3])), [0.5, -0.25, 3]);
    assert.throws(() => vectorFromBase64('AAA='), RangeError);
  });

  test('the chat renderers are unreachable for this dialect and fail loudly', () => {
    const renderer = openAIEmbeddings.createRenderer(exchange('float'));
    assert.throws(() => renderer.end(), /renders embeddings only/);
  });
});
