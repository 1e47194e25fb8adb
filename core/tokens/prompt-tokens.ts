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
import { reasoningOf, type ChatCompletionRequest, type ChatMessage } from '../canonical/chat-types.ts';
import { dataUrlImageSize, type ImageSize } from './image-size.ts';
import { imageTokens, type ImageDetail } from './image-tokens.ts';
import type { PromptTokenRules } from './prompt-token-rules.ts';
import { toolCallTokens, toolDefinitionTokens } from './tool-tokens.ts';

const TOKENS_PER_MESSAGE = 3;
const TOKENS_PER_NAME = 1;
const REPLY_PRIMING_TOKENS = 3;

type Count = (text: string) => number;

/**
 * What of a request's prompt count does not depend on the provider's rules: its text tokens (before
 * `textScale`), whether it has tools, and its images' sizes. The budget counts after routing with the
 * target's rules, the rate limit before it with the defaults: the text, nearly all the work, is counted
 * once (`token-estimate.ts` keeps these per exchange) and each set of rules applied to it.
 */
export interface PromptParts {
  readonly textTokens: number;
  readonly hasTools: boolean;
  readonly images: readonly PromptImage[];
}

/** One image of a prompt: its size from its data URL (null when unknown) and the detail asked. */
export interface PromptImage {
  readonly size: ImageSize | null;
  readonly detail: ImageDetail;
}

/**
 * Prompt tokens of `body` for a provider with `rules`, counting text with `count` (which bounds the
 * work of the whole request, `bounded-token-count.ts`). Never throws on odd shapes: what it does not
 * recognise counts as JSON text.
 */
export function requestPromptTokens(body: ChatCompletionRequest, count: Count, rules: PromptTokenRules): number {
  return promptTokensWith(promptParts(body, count), rules);
}

/** The rules-free parts of `body`'s prompt (see `PromptParts`), counting text with `count`. */
export function promptParts(body: ChatCompletionRequest, count: Count): PromptParts {
  const tally: Tally = { text: REPLY_PRIMING_TOKENS, images: [] };
  for (const message of body.messages) addMessage(tally, message, count);
  const hasTools = Array.isArray(body.tools) && body.tools.length > 0;
  if (hasTools) tally.text += toolDefinitionTokens(body.tools, count);
  return { textTokens: tally.text, hasTools, images: tally.images };
}

/** Prompt tokens of `parts` for a provider with `rules`: text scaled, images by the rules, the tools' system prompt. */
export function promptTokensWith(parts: PromptParts, rules: PromptTokenRules): number {
  let images = 0;
  for (const image of parts.images) images += imageTokens(rules.images, image.size, image.detail);
  const systemPrompt = parts.hasTools ? rules.toolsSystemPromptTokens : 0;
  return Math.ceil(parts.textTokens * rules.textScale) + images + systemPrompt;
}

/** Text tokens (before `textScale`) and the images of one request, kept apart because only text is counted here. */
interface Tally {
  text: number;
  images: PromptImage[];
}

function addMessage(tally: Tally, message: ChatMessage, count: Count): void {
  tally.text += TOKENS_PER_MESSAGE + count(message.role);
  if (message.name) tally.text += TOKENS_PER_NAME + count(message.name);
  if (typeof message.tool_call_id === 'string') tally.text += count(message.tool_call_id);
  const content = message.content;
  if (typeof content === 'string') tally.text += count(content);
  else if (Array.isArray(content)) {
    for (const part of content) {
      if (part.type === 'text' && typeof part.text === 'string') tally.text += count(part.text);
      else if (part.type === 'image_url') tally.images.push(promptImage(part.image_url));
      else tally.text += count(JSON.stringify(part));
    }
  }
  const reasoning = reasoningOf(message);
  if (reasoning) tally.text += count(reasoning);
  tally.text += toolCallTokens(message.tool_calls, count);
}

function promptImage(image: unknown): PromptImage {
  const fields = typeof image === 'object' && image !== null ? (image as { url?: unknown; detail?: unknown }) : {};
  const url = typeof fields.url === 'string' ? fields.url : '';
  const detail = fields.detail === 'low' || fields.detail === 'high' || fields.detail === 'auto' ? (fields.detail as ImageDetail) : undefined;
  return { size: dataUrlImageSize(url), detail };
}
