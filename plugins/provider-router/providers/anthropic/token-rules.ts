/**
 * Anthropic's prompt-token rules per Claude model, for the local estimate (`core/tokens/prompt-token-rules.ts`).
 * Sources:
 * - images: "Vision" guide (https://platform.claude.com/docs/en/build-with-claude/vision), 28-px
 *   patches (its table: 200×200 → 64, 1000×1000 → 1296, 1920×1080 → 1456×819 → 1560); standard tier
 *   long edge ≤ 1568 px and ≤ 1568 visual tokens; high-resolution tier (Claude Opus 4.7 and later)
 *   ≤ 2576 px and ≤ 4784 tokens. An image of unknown size costs the tier's maximum.
 * - tools: "Tool use" overview, pricing table "Tool use system prompt token count": the system prompt
 *   added when tools are present; the larger of its `auto`/`none` and `any`/`tool` figures is taken
 *   (the estimate does not read `tool_choice`): Opus 4.7 804, Opus 4.5 / 4.6, Sonnet 4.5 / 4.6 589,
 *   Sonnet 5 474, Opus 4.8 410, Claude 4 / 4.1 and 3.x 346 (Haiku 3.5 340, Opus 3 530).
 * - text: "Token counting" guide: Claude Opus 4.7 and later use a tokenizer that counts "approximately
 *   30 percent more tokens" than earlier models, hence `textScale` 1.3 for them.
 * Claude's tokenizer is not public: for earlier models the text is counted with `o200k_base` as is
 * (measured against Anthropic's published counts in test/core/token-estimate-corpus.test.ts).
 */
import type { ImageTokenRule } from '../../../../core/tokens/image-tokens.ts';
import type { PromptTokenRules } from '../../../../core/tokens/prompt-token-rules.ts';

const STANDARD_IMAGES: ImageTokenRule = Object.freeze({ kind: 'patches', patchPx: 28, maxLongEdgePx: 1568, maxPatches: 1568, tokensPerPatch: 1, unknownSizeTokens: 1568 });
const HIGH_RES_IMAGES: ImageTokenRule = Object.freeze({ kind: 'patches', patchPx: 28, maxLongEdgePx: 2576, maxPatches: 4784, tokensPerPatch: 1, unknownSizeTokens: 4784 });

const rules = (images: ImageTokenRule, toolsSystemPromptTokens: number, textScale: number): PromptTokenRules =>
  Object.freeze({ images, toolsSystemPromptTokens, textScale });

/** Claude Opus 4.7 and later, and the models sharing its tokenizer (Fable, Mythos): high-res images, 1.3× text. */
const NEW_TOKENIZER = /^claude-(opus-4-[789]|opus-[5-9]|sonnet-[5-9]|haiku-[5-9]|fable|mythos)/;

/** First match wins. */
const BY_MODEL: ReadonlyArray<[RegExp, PromptTokenRules]> = [
  [/^claude-opus-4-7/, rules(HIGH_RES_IMAGES, 804, 1.3)],
  [/^claude-opus-4-8/, rules(HIGH_RES_IMAGES, 410, 1.3)],
  [/^claude-sonnet-5/, rules(HIGH_RES_IMAGES, 474, 1.3)],
  [NEW_TOKENIZER, rules(HIGH_RES_IMAGES, 804, 1.3)],
  [/^claude-(opus|sonnet|haiku)-4-[56]/, rules(STANDARD_IMAGES, 589, 1)],
  [/^claude-3-opus/, rules(STANDARD_IMAGES, 530, 1)],
];

/** Claude 4 / 4.1 and 3.x: 346 tokens of tool system prompt, standard images, text as counted. */
const EARLIER = rules(STANDARD_IMAGES, 346, 1);

/** The rules of a Claude model id (an alias or a dated snapshot). */
export function anthropicPromptTokenRules(model: string): PromptTokenRules {
  return BY_MODEL.find(([pattern]) => pattern.test(model))?.[1] ?? EARLIER;
}
