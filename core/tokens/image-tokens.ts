/**
 * Prompt tokens of one image, by the rule its provider documents. The rule shapes live here; each
 * provider declares its constants in its own file (`Provider.promptTokenRules`), so this file
 * names no provider. Three shapes cover the documented rules:
 *
 * - `tiles` (OpenAI's GPT-4o family, "Images and vision" guide, "Calculating costs"): scale to fit a
 *   `fitPx` square, then scale down so the shortest side is at most `shortSidePx`, count the
 *   `tilePx` squares that cover it: `baseTokens + tokensPerTile × tiles`; `detail: "low"` costs
 *   `lowDetailTokens`. A 1024×1024 image at 85 + 170/tile costs 765, a 2048×4096 one 1105.
 * - `patches` (Anthropic's Claude, "Vision" guide; OpenAI's gpt-4.1-mini/nano, o4-mini with a
 *   multiplier): `ceil(w / patchPx) × ceil(h / patchPx)` patches after a downscale that keeps the
 *   long edge within `maxLongEdgePx` and the patches within `maxPatches`, times `tokensPerPatch`.
 *   Claude: 28-px patches, 1000×1000 → 1296, 1920×1080 → 1456×819 → 1560 (standard tier, ≤ 1568).
 * - `crop-tiles` (Google's Gemini, "Understand and count tokens"): both sides ≤ `smallMaxPx` → one
 *   tile; else crop units of `min(w, h) / 1.5` clamped to [`minUnitPx`, `maxUnitPx`], each unit
 *   `tokensPerTile` (258). Units are at most 768 px, so this is never below Gemini 2's 768-px tiling.
 *
 * An image whose size is unknown (a remote URL, an unreadable header) costs `unknownSizeTokens`: the
 * provider's largest single image, so that a reservation never under-reserves.
 */
import type { ImageSize } from './image-size.ts';

/** Tiles after a fit and a short-side downscale (OpenAI's tile models); `detail: "low"` is a flat cost. */
export interface TileImageRule {
  kind: 'tiles';
  fitPx: number;
  shortSidePx: number;
  tilePx: number;
  baseTokens: number;
  tokensPerTile: number;
  lowDetailTokens: number;
}

/** Square patches after a downscale within a long edge and a patch count (Claude; OpenAI's patch models). */
export interface PatchImageRule {
  kind: 'patches';
  patchPx: number;
  maxLongEdgePx: number;
  maxPatches: number;
  /** Tokens per patch (1 for Claude; OpenAI's per-model multiplier, e.g. 1.62). */
  tokensPerPatch: number;
}

/** One tile up to `smallMaxPx`, else crop units of the short side / 1.5 within [min, max] px (Gemini). */
export interface CropTileImageRule {
  kind: 'crop-tiles';
  smallMaxPx: number;
  minUnitPx: number;
  maxUnitPx: number;
  tokensPerTile: number;
}

/** One provider's (or model family's) image rule, plus what an image of unknown size costs. */
export type ImageTokenRule = (TileImageRule | PatchImageRule | CropTileImageRule) & {
  /** Tokens of an image whose size cannot be read: the provider's documented maximum for one image. */
  unknownSizeTokens: number;
};

/** `detail` of an OpenAI-shaped image part; other providers ignore it. */
export type ImageDetail = 'auto' | 'low' | 'high' | undefined;

/** Tokens of one image of `size` (null = unknown) under `rule`. Pure arithmetic, a few µs at most. */
export function imageTokens(rule: ImageTokenRule, size: ImageSize | null, detail: ImageDetail): number {
  if (rule.kind === 'tiles' && detail === 'low') return rule.lowDetailTokens;
  if (!size) return rule.unknownSizeTokens;
  switch (rule.kind) {
    case 'tiles':
      return tileTokens(rule, size);
    case 'patches':
      return Math.ceil(patchCount(rule, size) * rule.tokensPerPatch);
    case 'crop-tiles':
      return cropTileTokens(rule, size);
  }
}

function tileTokens(rule: TileImageRule, { width, height }: ImageSize): number {
  let scale = Math.min(1, rule.fitPx / Math.max(width, height));
  scale *= Math.min(1, rule.shortSidePx / (Math.min(width, height) * scale));
  const tiles = Math.ceil((width * scale) / rule.tilePx) * Math.ceil((height * scale) / rule.tilePx);
  return rule.baseTokens + rule.tokensPerTile * tiles;
}

const patchesOf = (rule: PatchImageRule, width: number, height: number) => Math.ceil(width / rule.patchPx) * Math.ceil(height / rule.patchPx);

/**
 * Patches after the provider's downscale: the largest size of the same aspect whose long edge and
 * patch count fit. The long edge is searched downward one pixel at a time from an estimate that is
 * at most a few patches too large, so the loop runs tens of times, bounded by `maxLongEdgePx`.
 */
function patchCount(rule: PatchImageRule, { width, height }: ImageSize): number {
  if (Math.max(width, height) <= rule.maxLongEdgePx && patchesOf(rule, width, height) <= rule.maxPatches) return patchesOf(rule, width, height);
  const long = Math.max(width, height);
  const ratio = Math.min(width, height) / long;
  const byArea = Math.sqrt((rule.maxPatches * rule.patchPx * rule.patchPx) / ratio);
  for (let edge = Math.min(long, rule.maxLongEdgePx, Math.ceil(byArea) + rule.patchPx); edge > 0; edge--) {
    const patches = patchesOf(rule, edge, Math.max(1, Math.round(edge * ratio)));
    if (patches <= rule.maxPatches) return patches;
  }
  return rule.maxPatches;
}

function cropTileTokens(rule: CropTileImageRule, { width, height }: ImageSize): number {
  if (width <= rule.smallMaxPx && height <= rule.smallMaxPx) return rule.tokensPerTile;
  const unit = Math.min(rule.maxUnitPx, Math.max(rule.minUnitPx, Math.floor(Math.min(width, height) / 1.5)));
  return Math.ceil(width / unit) * Math.ceil(height / unit) * rule.tokensPerTile;
}
