/**
 * Prompt tokens of a canonical chat request, counted locally (`token-estimate.ts` supplies the
 * bounded `o200k_base` count; `rules` the target provider's differences, `prompt-token-rules.ts`).
 *
 * Message overhead follows OpenAI's cookbook "How to count tokens with tiktoken": 3 tokens per
 * message plus its role, 1 more plus the name for a `name`, 3 to prime the reply (its published
 * check: 124 prompt tokens for its six-message example on gpt-4o, as the API reports). Text parts,
 * assistant reasoning text, tool calls and tool results (`tool-tokens.ts`) are counted as text and
 * scaled by `rules.textScale`; images by `rules.images` from the size in their data URL
 * (`image-size.ts`, `image-tokens.ts`); tool definitions per the cookbook, plus the provider's
 * `toolsSystemPromptTokens`. Parts of other types (audio, files) count as their JSON text.
 */
import { reasoningOf, type ChatCompletionRequest, type ChatMessage } from './chat-types.ts';
import { dataUrlImageSize } from './image-size.ts';
import { imageTokens, type ImageDetail } from './image-tokens.ts';
import type { PromptTokenRules } from './prompt-token-rules.ts';
import { toolCallTokens, toolDefinitionTokens } from './tool-tokens.ts';

const TOKENS_PER_MESSAGE = 3;
const TOKENS_PER_NAME = 1;
const REPLY_PRIMING_TOKENS = 3;

type Count = (text: string) => number;

/** Text tokens (before `textScale`) and image tokens of one request, kept apart because only text scales. */
interface Tally {
  text: number;
  images: number;
}

/**
 * Prompt tokens of `body` for a provider with `rules`, counting text with `count` (which bounds the
 * work of the whole request, `bounded-token-count.ts`). Never throws on odd shapes: what it does not
 * recognise counts as JSON text.
 */
export function requestPromptTokens(body: ChatCompletionRequest, count: Count, rules: PromptTokenRules): number {
  const tally: Tally = { text: REPLY_PRIMING_TOKENS, images: 0 };
  for (const message of body.messages) addMessage(tally, message, count, rules);
  const hasTools = Array.isArray(body.tools) && body.tools.length > 0;
  if (hasTools) tally.text += toolDefinitionTokens(body.tools, count);
  const systemPrompt = hasTools ? rules.toolsSystemPromptTokens : 0;
  return Math.ceil(tally.text * rules.textScale) + tally.images + systemPrompt;
}

function addMessage(tally: Tally, message: ChatMessage, count: Count, rules: PromptTokenRules): void {
  tally.text += TOKENS_PER_MESSAGE + count(message.role);
  if (message.name) tally.text += TOKENS_PER_NAME + count(message.name);
  if (typeof message.tool_call_id === 'string') tally.text += count(message.tool_call_id);
  const content = message.content;
  if (typeof content === 'string') tally.text += count(content);
  else if (Array.isArray(content)) {
    for (const part of content) {
      if (part.type === 'text' && typeof part.text === 'string') tally.text += count(part.text);
      else if (part.type === 'image_url') tally.images += partImageTokens(part.image_url, rules);
      else tally.text += count(JSON.stringify(part));
    }
  }
  const reasoning = reasoningOf(message);
  if (reasoning) tally.text += count(reasoning);
  tally.text += toolCallTokens(message.tool_calls, count);
}

function partImageTokens(image: unknown, rules: PromptTokenRules): number {
  const fields = typeof image === 'object' && image !== null ? (image as { url?: unknown; detail?: unknown }) : {};
  const url = typeof fields.url === 'string' ? fields.url : '';
  const detail = fields.detail === 'low' || fields.detail === 'high' || fields.detail === 'auto' ? (fields.detail as ImageDetail) : undefined;
  return imageTokens(rules.images, dataUrlImageSize(url), detail);
}
