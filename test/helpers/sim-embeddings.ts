/**
 * The deterministic embeddings every upstream simulator answers with: a vector derived from the
 * input's text (or token ids), whose values are multiples of 1/256 in [-0.5, 0.5) so they survive a
 * float32 round trip exactly (OpenAI's base64 encoding), and a token count per input (⌈chars / 4⌉ for
 * text, the id count for tokens) the simulators report as usage where their API has usage.
 */

/** Vector length when the request names none. */
export const SIM_EMBEDDING_DIMENSIONS = 8;

function hashOf(text: string): number {
  let hash = 2_166_136_261;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16_777_619) >>> 0;
  return hash;
}

/** The simulators' vector for one input (text, or token ids), `dimensions` long. */
export function simEmbedding(input: string | number[], dimensions = SIM_EMBEDDING_DIMENSIONS): number[] {
  const hash = hashOf(typeof input === 'string' ? input : input.join(','));
  return Array.from({ length: dimensions }, (_, i) => ((((hash >>> (i % 24)) + i * 37) % 256) - 128) / 256);
}

/** The tokens the simulators report for one input. */
export function simEmbeddingTokens(input: string | number[]): number {
  return typeof input === 'string' ? Math.ceil(input.length / 4) : input.length;
}

/** OpenAI's `input` as a list of inputs (a string or one token array is one input). */
export function simInputs(input: unknown): Array<string | number[]> {
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && typeof input[0] === 'number') return [input as number[]];
  return (input ?? []) as Array<string | number[]>;
}
