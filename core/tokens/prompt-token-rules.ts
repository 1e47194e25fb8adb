/**
 * What differs between providers when a prompt is counted locally: how images cost, what a provider
 * adds when tools are present, and how its tokenizer compares with `o200k_base`. A provider declares
 * its rules (`Provider.promptTokenRules(model)` in the provider's own file); the router puts
 * them on `ex.target.promptTokenRules`; the estimator (`token-estimate.ts`) reads them there. Before
 * routing (the rate limit's check) the target is unknown and `DEFAULT_PROMPT_TOKEN_RULES` apply.
 */
import type { ImageTokenRule } from './image-tokens.ts';

export interface PromptTokenRules {
  /** How one image costs (`image-tokens.ts`). */
  images: ImageTokenRule;
  /**
   * Tokens the provider adds to the prompt when the request has tools, beyond the definitions
   * themselves (Anthropic's "tool use system prompt"); 0 when none is documented.
   */
  toolsSystemPromptTokens: number;
  /**
   * Factor on the text tokens counted with `o200k_base`, for a tokenizer documented to count
   * differently (Claude Opus 4.7 and later: about 30 % more than earlier Claude models); 1 = none.
   */
  textScale: number;
}

/**
 * OpenAI GPT-4o's rules (the canonical request is OpenAI chat-shaped, and `o200k_base` is its
 * tokenizer): 512-px tiles at 170 tokens + 85, a 2048-px fit, 768-px short side; an image of unknown
 * size costs the most a GPT-4o image can: 768×2048 → 8 tiles → 1445. Used before a request is routed
 * and for providers that document no rules of their own.
 */
export const DEFAULT_PROMPT_TOKEN_RULES: PromptTokenRules = Object.freeze({
  images: Object.freeze({ kind: 'tiles', fitPx: 2048, shortSidePx: 768, tilePx: 512, baseTokens: 85, tokensPerTile: 170, lowDetailTokens: 85, unknownSizeTokens: 1445 }),
  toolsSystemPromptTokens: 0,
  textScale: 1,
});
