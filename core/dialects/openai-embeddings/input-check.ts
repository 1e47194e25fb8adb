/**
 * The hand check of an embeddings body's `input`, before the schema: one message per mistake, naming
 * the element (`input[3]`) in OpenAI's param style. OpenAI refuses an empty string or array and more
 * than 2048 inputs (https://platform.openai.com/docs/api-reference/embeddings/create); so does the
 * gateway, before spending a reservation on it.
 */
import { invalidRequest } from '../../errors.ts';
import type { EmbeddingRequest } from '../../canonical/embedding-types.ts';
import { MAX_EMBEDDING_INPUTS } from './request-schema.ts';

const FORMS = 'a string, an array of strings, an array of token ids, or an array of token-id arrays';

const isTokenId = (value: unknown): boolean => Number.isInteger(value) && (value as number) >= 0;

function checkTokenIds(ids: readonly unknown[], param: string): void {
  if (ids.length === 0) throw invalidRequest(`"${param}" is an empty array of token ids; send at least one.`, param);
  const bad = ids.findIndex((id) => !isTokenId(id));
  if (bad !== -1) throw invalidRequest(`"${param}[${bad}]" must be a token id (an integer ≥ 0).`, `${param}[${bad}]`);
}

/**
 * `input` normalized to a list (one vector per element). Throws 400 `invalid_request` naming `input`
 * or the bad element when it is missing, empty, too long or mixes forms.
 */
export function embeddingInputs(input: unknown): EmbeddingRequest['input'] {
  if (input === undefined) throw invalidRequest('Missing required field "input".', 'input');
  if (typeof input === 'string') {
    if (input === '') throw invalidRequest('"input" is an empty string; send some text to embed.', 'input');
    return [input];
  }
  if (!Array.isArray(input)) throw invalidRequest(`"input" must be ${FORMS}.`, 'input');
  if (input.length === 0) throw invalidRequest('"input" is an empty array; send at least one input.', 'input');
  if (typeof input[0] === 'number') {
    checkTokenIds(input, 'input');
    return [input as number[]];
  }
  if (input.length > MAX_EMBEDDING_INPUTS) {
    throw invalidRequest(`"input" has ${input.length} inputs; at most ${MAX_EMBEDDING_INPUTS} are allowed per request. Split it into several requests.`, 'input');
  }
  if (typeof input[0] === 'string') {
    input.forEach((text, i) => {
      if (typeof text !== 'string') throw invalidRequest(`"input[${i}]" must be a string, like the other inputs.`, `input[${i}]`);
      if (text === '') throw invalidRequest(`"input[${i}]" is an empty string; send some text to embed.`, `input[${i}]`);
    });
    return input as string[];
  }
  if (Array.isArray(input[0])) {
    input.forEach((ids, i) => {
      if (!Array.isArray(ids)) throw invalidRequest(`"input[${i}]" must be an array of token ids, like the other inputs.`, `input[${i}]`);
      checkTokenIds(ids, `input[${i}]`);
    });
    return input as number[][];
  }
  throw invalidRequest(`"input[0]" is neither text nor token ids; "input" must be ${FORMS}.`, 'input[0]');
}
