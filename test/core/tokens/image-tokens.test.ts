/**
 * Image sizes read from data URL headers (`core/tokens/image-size.ts`) and image tokens by each provider's
 * documented rule (`core/tokens/image-tokens.ts`, constants from the providers' token-rules files), checked
 * against the examples the providers publish.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dataUrlImageSize } from '../../../core/tokens/image-size.ts';
import { imageTokens } from '../../../core/tokens/image-tokens.ts';
import { DEFAULT_PROMPT_TOKEN_RULES } from '../../../core/tokens/prompt-token-rules.ts';
import { openAIPromptTokenRules } from '../../../plugins/provider-router/providers/openai/token-rules.ts';
import { anthropicPromptTokenRules } from '../../../plugins/provider-router/providers/anthropic/token-rules.ts';
import { GEMINI_PROMPT_TOKEN_RULES } from '../../../plugins/provider-router/providers/gemini/token-rules.ts';
import { dataUrl, gif, jpeg, png, webp } from '../../helpers/image-headers.ts';

describe('image size from a data URL', () => {
  const cases: Array<[string, string, { width: number; height: number } | null]> = [
    ['PNG', dataUrl(png(1920, 1080)), { width: 1920, height: 1080 }],
    ['GIF', dataUrl(gif(320, 200), 'image/gif'), { width: 320, height: 200 }],
    ['lossy WebP', dataUrl(webp('VP8 ', 800, 600), 'image/webp'), { width: 800, height: 600 }],
    ['lossless WebP', dataUrl(webp('VP8L', 1000, 16383), 'image/webp'), { width: 1000, height: 16383 }],
    ['extended WebP', dataUrl(webp('VP8X', 4000, 3000), 'image/webp'), { width: 4000, height: 3000 }],
    ['JPEG with its SOF after APP0, a 60 KB EXIF block and DQT', dataUrl(jpeg(3024, 4032, 60_000), 'image/jpeg'), { width: 3024, height: 4032 }],
    ['a remote URL', 'https://example.test/cat.jpg', null],
    ['a data URL that is not base64', 'data:image/png,%89PNG', null],
    ['an unknown format', dataUrl(Buffer.from('BM this is a bitmap header')), null],
    ['a truncated PNG', dataUrl(png(10, 10).subarray(0, 20)), null],
    ['a JPEG whose segments never reach a SOF', dataUrl(Buffer.concat([Buffer.from([0xff, 0xd8]), Buffer.alloc(300, 0xff)]), 'image/jpeg'), null],
    ['a zero-width PNG', dataUrl(png(0, 10)), null],
  ];
  for (const [title, url, expected] of cases) {
    test(`reads ${title}`, () => assert.deepEqual(dataUrlImageSize(url), expected));
  }

  test('reads the size of a 20 MB image from its header', () => {
    // The header is all it decodes (speed is not asserted here: that is the benchmark's job).
    const big = dataUrl(png(4000, 3000, 20 * 1024 * 1024));
    assert.deepEqual(dataUrlImageSize(big), { width: 4000, height: 3000 });
  });
});

describe('image tokens by documented rules', () => {
  const size = (width: number, height: number) => ({ width, height });

  test('OpenAI GPT-4o: the vision guide\'s examples', () => {
    const rule = openAIPromptTokenRules('gpt-4o-2024-08-06').images;
    assert.equal(imageTokens(rule, size(1024, 1024), 'high'), 765);
    assert.equal(imageTokens(rule, size(2048, 4096), 'auto'), 1105);
    assert.equal(imageTokens(rule, size(4096, 8192), 'low'), 85);
    assert.equal(imageTokens(rule, null, 'high'), 85 + 8 * 170, 'unknown size: the most one image can cost');
    assert.equal(imageTokens(rule, null, 'low'), 85, 'low detail needs no size');
    assert.deepEqual(rule, DEFAULT_PROMPT_TOKEN_RULES.images, 'GPT-4o\'s rules are the defaults');
  });

  test('OpenAI per model family: gpt-4o-mini\'s inflated tiles, gpt-5\'s, and patch models with their multipliers', () => {
    assert.equal(imageTokens(openAIPromptTokenRules('gpt-4o-mini').images, size(1024, 1024), 'high'), 2833 + 4 * 5667);
    assert.equal(imageTokens(openAIPromptTokenRules('gpt-4o-mini').images, size(1024, 1024), 'low'), 2833);
    assert.equal(imageTokens(openAIPromptTokenRules('gpt-5-2025-08-07').images, size(1024, 1024), 'high'), 70 + 4 * 140);
    assert.equal(imageTokens(openAIPromptTokenRules('o3').images, size(512, 512), undefined), 75 + 150);
    // 1024×1024 is 32×32 = 1024 patches; the guide's multiplier for gpt-4.1-mini is 1.62.
    assert.equal(imageTokens(openAIPromptTokenRules('gpt-4.1-mini').images, size(1024, 1024), 'high'), Math.ceil(1024 * 1.62));
    // 1800×2400 is over 1536 patches: scaled down (the guide's example bills 1452; this search errs high by ≤ 6 %).
    const scaled = imageTokens(openAIPromptTokenRules('gpt-4.1-nano').images, size(1800, 2400), 'high') / 2.46;
    assert.ok(scaled >= 1452 && scaled <= 1536, String(scaled));
  });

  test('Anthropic: the vision guide\'s table, standard and high-resolution tiers', () => {
    const standard = anthropicPromptTokenRules('claude-sonnet-4-5-20250929').images;
    const highRes = anthropicPromptTokenRules('claude-opus-4-7').images;
    const table: Array<[number, number, number, number]> = [
      [200, 200, 64, 64], [1000, 1000, 1296, 1296], [1092, 1092, 1521, 1521],
      [1920, 1080, 1560, 2691], [2000, 1500, 1564, 3888], [3840, 2160, 1560, 4784],
    ];
    for (const [width, height, standardTokens, highResTokens] of table) {
      assert.equal(imageTokens(standard, size(width, height), undefined), standardTokens, `${width}×${height} standard`);
      assert.equal(imageTokens(highRes, size(width, height), undefined), highResTokens, `${width}×${height} high-res`);
    }
    assert.equal(imageTokens(standard, null, undefined), 1568);
    assert.equal(imageTokens(highRes, null, undefined), 4784);
    assert.equal(imageTokens(standard, size(2000, 1500), 'low'), 1564, 'Claude has no low-detail mode');
  });

  test('Gemini: 258 up to 384 px, else crop units of 768 px at most', () => {
    const rule = GEMINI_PROMPT_TOKEN_RULES.images;
    assert.equal(imageTokens(rule, size(384, 384), undefined), 258);
    assert.equal(imageTokens(rule, size(768, 768), undefined), 4 * 258, 'unit 512: 2×2');
    assert.equal(imageTokens(rule, size(1920, 1080), undefined), 6 * 258, 'unit 720: 3×2');
    assert.equal(imageTokens(rule, size(4000, 3000), undefined), 6 * 4 * 258, 'unit capped at 768');
    assert.equal(imageTokens(rule, null, undefined), 16 * 258);
  });
});
