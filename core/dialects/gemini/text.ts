/**
 * The texts of a Gemini request (`Dialect.mapRequestText`): `systemInstruction` (a string or a
 * `Content`) and each part's `text` in `contents`. Thought parts (their signature covers them),
 * function calls' `args`, function responses and inline data are left as they are.
 * Source: https://ai.google.dev/api/caching#Content .
 */
import { mapItems, withField, type TextMap } from '../../canonical/text-map.ts';

type Json = Record<string, unknown>;

function mapParts(content: Json, fn: TextMap): Json {
  if (!Array.isArray(content.parts)) return content;
  return withField(content, 'parts', mapItems(content.parts as Json[], (part) =>
    typeof part?.text === 'string' && part.thought !== true ? withField(part, 'text', fn(part.text)) : part));
}

export function mapGeminiRequestText(body: Readonly<Json>, fn: TextMap): Readonly<Json> {
  let out = body;
  const system = body.systemInstruction;
  if (typeof system === 'string') out = withField(out, 'systemInstruction', fn(system));
  else if (typeof system === 'object' && system !== null) out = withField(out, 'systemInstruction', mapParts(system as Json, fn));
  if (Array.isArray(body.contents)) {
    out = withField(out, 'contents', mapItems(body.contents as Json[], (content) => mapParts(content, fn)));
  }
  return out;
}
