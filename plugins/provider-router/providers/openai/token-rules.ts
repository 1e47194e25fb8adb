/**
 * OpenAI's prompt-token rules per model family, for the local estimate (`core/tokens/prompt-token-rules.ts`).
 * Source: OpenAI "Images and vision" guide, "Calculating costs"
 * (https://platform.openai.com/docs/guides/images-vision#calculating-costs):
 * - tile models: 512-px tiles after a 2048-px fit and a 768-px short side; base / tile tokens
 *   gpt-5 70 / 140; gpt-4o, gpt-4.1, gpt-4.5 85 / 170; gpt-4o-mini 2833 / 5667; o1, o1-pro, o3 75 / 150;
 *   computer-use-preview 65 / 129; `detail: "low"` costs the base alone;
 * - patch models: 32-px patches, at most 1536 (the image is scaled down to fit), times a multiplier:
 *   gpt-5-mini and gpt-4.1-mini 1.62, gpt-5-nano and gpt-4.1-nano 2.46, o4-mini 1.72.
 * An image of unknown size (a remote URL) costs the family's maximum: 8 tiles (768×2048), or 1536 patches.
 * Text and tool definitions need no rule: `o200k_base` and the cookbook's counting are OpenAI's own.
 */
import type { ImageTokenRule } from '../../../../core/tokens/image-tokens.ts';
import { DEFAULT_PROMPT_TOKEN_RULES, type PromptTokenRules } from '../../../../core/tokens/prompt-token-rules.ts';

const MAX_TILES = 8;
const MAX_PATCHES = 1536;

function tiles(baseTokens: number, tokensPerTile: number): ImageTokenRule {
  return { kind: 'tiles', fitPx: 2048, shortSidePx: 768, tilePx: 512, baseTokens, tokensPerTile, lowDetailTokens: baseTokens, unknownSizeTokens: baseTokens + MAX_TILES * tokensPerTile };
}

function patches(tokensPerPatch: number): ImageTokenRule {
  return { kind: 'patches', patchPx: 32, maxLongEdgePx: MAX_PATCHES * 32, maxPatches: MAX_PATCHES, tokensPerPatch, unknownSizeTokens: Math.ceil(MAX_PATCHES * tokensPerPatch) };
}

const rules = (images: ImageTokenRule): PromptTokenRules => Object.freeze(Object.assign({}, DEFAULT_PROMPT_TOKEN_RULES, { images: Object.freeze(images) }));

/** First match wins: the more specific names (`-mini`, `-nano`) come before their family. */
const BY_MODEL: ReadonlyArray<[RegExp, PromptTokenRules]> = [
  [/^gpt-5(\.\d+)?-mini/, rules(patches(1.62))],
  [/^gpt-5(\.\d+)?-nano/, rules(patches(2.46))],
  [/^gpt-4\.1-mini/, rules(patches(1.62))],
  [/^gpt-4\.1-nano/, rules(patches(2.46))],
  [/^o4-mini/, rules(patches(1.72))],
  [/^gpt-4o-mini/, rules(tiles(2833, 5667))],
  [/^gpt-5/, rules(tiles(70, 140))],
  [/^(o1|o3)/, rules(tiles(75, 150))],
  [/^computer-use-preview/, rules(tiles(65, 129))],
];

/** The rules of an OpenAI model id (a dated snapshot matches its family); GPT-4o's for any other. */
export function openAIPromptTokenRules(model: string): PromptTokenRules {
  return BY_MODEL.find(([pattern]) => pattern.test(model))?.[1] ?? DEFAULT_PROMPT_TOKEN_RULES;
}
