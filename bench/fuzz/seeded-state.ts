/**
 * The fuzz world's stored Responses state (issue 39, items 1 and 7): before the first case, the
 * "main" fuzz user and a second user ("other") each store a few responses through the gateway
 * (`store: true`, on a native and a translated route, one continuing another), so the cases can name
 * real ids: the main user's own (which must resolve), the other user's (which must never be served
 * to the main user), and one big stored response (continuing it exceeds the world's small
 * `maxExpandedBytes`, as do 1,000 references to one item). Only output items can be referenced.
 * The other user's inputs carry `OTHER_USER_MARKER`: no answer to a case and no upstream request
 * after the seeding may contain it.
 */

/** Text only the other user's stored items hold. */
export const OTHER_USER_MARKER = 'fuzz-other-user-private-7f3a';
/** Characters of the main user's big stored input: more than the world's `maxExpandedBytes` (fuzz-world.ts). */
export const BIG_ITEM_CHARS = 150_000;

/** Ids of the seeded responses and items. */
export interface SeededState {
  /** The main user's small responses that no case deletes (continued with previous_response_id). */
  ownResponses: string[];
  /** Output item ids of `ownResponses`. */
  ownItems: string[];
  /** The main user's response whose input has `BIG_ITEM_CHARS` characters (continuing it: 413). */
  bigResponse: string;
  /** The main user's responses the DELETE cases may delete (200 the first time, 404 after). */
  disposable: string[];
  /** The other user's responses. */
  otherResponses: string[];
  /** Item ids only the other user's responses hold. */
  otherItems: string[];
}

type Json = Record<string, unknown>;

/** `POST /api/v1/responses` with `key`; the stored response's id and its output item ids. */
async function store(origin: string, key: string, body: Json): Promise<{ id: string; outputIds: string[] }> {
  const res = await fetch(`${origin}/api/v1/responses`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ store: true, ...body }),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`seeding a stored response failed: ${res.status} ${text.slice(0, 300)}`);
  const json = JSON.parse(text) as { id: string; output?: Array<{ id?: unknown }> };
  return { id: json.id, outputIds: (json.output ?? []).map((o) => o.id).filter((id): id is string => typeof id === 'string') };
}

const message = (id: string, text: string) => ({ type: 'message', id, role: 'user', content: [{ type: 'input_text', text }] });

/** Stores the seeded responses of the main user (`mainKey`) and the other user (`otherKey`). */
export async function seedResponses(origin: string, mainKey: string, otherKey: string): Promise<SeededState> {
  const first = await store(origin, mainKey, { model: 'resp/gpt-4o-mini', input: [message('msg_fuzz_own_1', 'Say hello')] });
  const second = await store(origin, mainKey, { model: 'anthropic/claude-haiku-4-5', previous_response_id: first.id, input: [message('msg_fuzz_own_2', 'Again')] });
  const big = await store(origin, mainKey, { model: 'resp/gpt-4o-mini', input: [message('msg_fuzz_own_big', 'b'.repeat(BIG_ITEM_CHARS))], max_output_tokens: 16 });
  const disposable: string[] = [];
  for (let i = 0; i < 4; i++) disposable.push((await store(origin, mainKey, { model: 'anthropic/claude-haiku-4-5', input: `Disposable ${i}` })).id);
  const otherFirst = await store(origin, otherKey, { model: 'resp/gpt-4o-mini', input: [message('msg_fuzz_other_1', `Keep this: ${OTHER_USER_MARKER}`)] });
  const otherSecond = await store(origin, otherKey, {
    model: 'anthropic/claude-haiku-4-5', previous_response_id: otherFirst.id, input: [message('msg_fuzz_other_2', `And this: ${OTHER_USER_MARKER}`)],
  });
  const ownItems = [...first.outputIds, ...second.outputIds];
  // An upstream may reuse output ids across responses; only ids the main user does not hold are "the other's".
  const otherItems = ['msg_fuzz_other_1', ...otherFirst.outputIds, ...otherSecond.outputIds].filter((id) => !ownItems.includes(id) && !big.outputIds.includes(id));
  if (ownItems.length === 0 || otherItems.length < 2) throw new Error('seeding: the stored responses have no output item ids');
  return {
    ownResponses: [first.id, second.id], ownItems, bigResponse: big.id, disposable,
    otherResponses: [otherFirst.id, otherSecond.id], otherItems,
  };
}
