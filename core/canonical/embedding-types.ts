/**
 * The canonical embeddings call, beside the canonical chat request (`chat-types.ts`): what the
 * `openai-embeddings` dialect parses a client's body into (`EmbeddingRequest`, the exchange's canonical
 * request: `canonical-request.ts`) and what every provider's embeddings codec decodes its upstream's answer into
 * (`EmbeddingResult`). Shapes follow OpenAI's `POST /v1/embeddings` (openai-node
 * `src/resources/embeddings.ts`): `input` is text or token ids, one vector per input, in input order.
 * An embeddings call generates nothing: it is billed on its input tokens alone (`worst-case.ts`).
 */
import { invalidRequest, type GatewayError } from '../errors.ts';

/** How vectors go back to the client: JSON numbers, or base64 of little-endian float32s (OpenAI's). */
export type EmbeddingEncoding = 'float' | 'base64';

/** One embeddings call, normalized: always a list of inputs, one vector asked per input. */
export interface EmbeddingRequest {
  /** The client's `model` field (`provider/model` or a bare id), resolved by the router. */
  model: string;
  /** Texts, or token-id arrays (OpenAI's `number[]` / `number[][]` input), at least one. */
  input: string[] | number[][];
  /** Requested vector length (OpenAI `dimensions`), positive; null = the model's own. */
  dimensions: number | null;
  /** How the client wants the vectors encoded (default `float`). */
  encodingFormat: EmbeddingEncoding;
}

/** An upstream's embeddings answer, decoded. */
export interface EmbeddingResult {
  /** One float vector per input, in input order. */
  vectors: number[][];
  /** The model the upstream says it used ('' when it does not say). */
  model: string;
  /** Input tokens the upstream reported; null when it reports none (Gemini): counted locally then. */
  promptTokens: number | null;
}

/** True when the inputs are token-id arrays rather than texts. */
export function isTokenInput(input: EmbeddingRequest['input']): input is number[][] {
  return input.length > 0 && Array.isArray(input[0]);
}

/**
 * The inputs as texts, for a provider whose API takes only text. Throws 400 `invalid_request`
 * (param `input`) for token-id arrays, naming the provider.
 */
export function textInputs(request: EmbeddingRequest, providerName: string): string[] {
  if (isTokenInput(request.input)) throw tokenInputRefused(providerName);
  return request.input;
}

function tokenInputRefused(providerName: string): GatewayError {
  return invalidRequest(`${providerName} embeds text only; send "input" as a string or an array of strings, not token ids.`, 'input');
}

/**
 * A vector as OpenAI's `encoding_format: "base64"` sends it: the float32 values, little-endian,
 * base64-encoded (what openai-node's `toFloat32Array` reads back).
 */
export function vectorToBase64(vector: readonly number[]): string {
  const bytes = Buffer.allocUnsafe(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i]!, i * 4);
  return bytes.toString('base64');
}

/** The float values of a base64 vector (little-endian float32s). Throws `RangeError` when it is not whole floats. */
export function vectorFromBase64(text: string): number[] {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length % 4 !== 0) throw new RangeError('a base64 embedding is not a whole number of float32 values');
  const vector = new Array<number>(bytes.length / 4);
  for (let i = 0; i < vector.length; i++) vector[i] = bytes.readFloatLE(i * 4);
  return vector;
}
