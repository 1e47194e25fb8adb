/**
 * Gemini's prompt-token rules, for the local estimate (`core/tokens/prompt-token-rules.ts`). Source:
 * "Understand and count tokens" (https://ai.google.dev/gemini-api/docs/tokens) and "Image
 * understanding": an image with both sides ≤ 384 px is 258 tokens; a larger one is cropped into
 * units of its short side / 1.5, kept within 256-768 px, each scaled to 768×768 and 258 tokens.
 * Gemini documents no largest image; one of unknown size (a file or remote URL) is taken as a
 * 3072×3072 image: 16 units of 768 px, 4128 tokens. Gemini's tokenizer is not public: text and tool
 * declarations are counted with `o200k_base` and OpenAI's cookbook framing.
 */
import type { PromptTokenRules } from '../../../../core/tokens/prompt-token-rules.ts';

export const GEMINI_PROMPT_TOKEN_RULES: PromptTokenRules = Object.freeze({
  images: Object.freeze({ kind: 'crop-tiles', smallMaxPx: 384, minUnitPx: 256, maxUnitPx: 768, tokensPerTile: 258, unknownSizeTokens: 16 * 258 }),
  toolsSystemPromptTokens: 0,
  textScale: 1,
});
