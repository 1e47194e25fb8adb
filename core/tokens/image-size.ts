/**
 * The pixel size of an image sent inline as a base64 data URL (`data:image/png;base64,...`), read from
 * its header without decoding the image, for the prompt estimate's image rules (`image-tokens.ts`).
 *
 * Why not decode: a prompt may carry several 20 MB images and the estimate runs on the request path.
 * Only the bytes a header needs are base64-decoded, by offset (4 base64 characters hold 3 bytes), so
 * the work per image is bounded: PNG, GIF and WebP read a fixed prefix; JPEG walks its segment
 * headers (each read is 4 bytes) up to `MAX_JPEG_SEGMENTS`, skipping segment bodies unread.
 *
 * Formats (their specifications): PNG IHDR width/height at bytes 16-23 (big-endian); GIF logical
 * screen width/height at 6-9 (little-endian); WebP `VP8 ` (lossy: 14-bit sizes at 26-29), `VP8L`
 * (lossless: 14-bit sizes packed at 21-24, minus one) and `VP8X` (extended: 24-bit canvas size minus
 * one at 24-29); JPEG the first SOFn segment (C0-CF but C4, C8, CC): height then width at its bytes 3-6.
 */

/** Width and height in pixels. */
export interface ImageSize {
  width: number;
  height: number;
}

/** Segment headers a JPEG walk reads at most: real files have a dozen or so before their SOF. */
export const MAX_JPEG_SEGMENTS = 256;

const DATA_URL_PREFIX = /^data:[^,;]*(?:;[^,;]*)*;base64,/i;

/**
 * The size of the image in a base64 data URL; null for a remote URL, a data URL that is not base64,
 * an unknown format or a header that does not parse (the caller then assumes the provider's largest
 * image). Never throws.
 */
export function dataUrlImageSize(url: string): ImageSize | null {
  const prefix = DATA_URL_PREFIX.exec(url.slice(0, 256));
  if (!prefix) return null;
  const bytes = base64Reader(url, prefix[0].length);
  return pngSize(bytes) ?? gifSize(bytes) ?? webpSize(bytes) ?? jpegSize(bytes);
}

/** Random access to the bytes of base64 text starting at `start`, decoding only what is read. */
interface ByteReader {
  /** `length` bytes at byte offset `offset`; shorter (possibly empty) past the end. */
  read(offset: number, length: number): Buffer;
}

function base64Reader(text: string, start: number): ByteReader {
  return {
    read(offset, length) {
      const firstGroup = Math.floor(offset / 3);
      const lastGroup = Math.ceil((offset + length) / 3);
      const chunk = text.slice(start + firstGroup * 4, start + lastGroup * 4);
      const decoded = Buffer.from(chunk, 'base64');
      const skip = offset - firstGroup * 3;
      return decoded.subarray(skip, skip + length);
    },
  };
}

const sane = (size: ImageSize): ImageSize | null => (size.width > 0 && size.height > 0 ? size : null);

function pngSize(bytes: ByteReader): ImageSize | null {
  const head = bytes.read(0, 24);
  if (head.length < 24 || head.readUInt32BE(0) !== 0x89504e47 || head.toString('latin1', 12, 16) !== 'IHDR') return null;
  return sane({ width: head.readUInt32BE(16), height: head.readUInt32BE(20) });
}

function gifSize(bytes: ByteReader): ImageSize | null {
  const head = bytes.read(0, 10);
  if (head.length < 10 || head.toString('latin1', 0, 4) !== 'GIF8') return null;
  return sane({ width: head.readUInt16LE(6), height: head.readUInt16LE(8) });
}

function webpSize(bytes: ByteReader): ImageSize | null {
  const head = bytes.read(0, 30);
  if (head.length < 30 || head.toString('latin1', 0, 4) !== 'RIFF' || head.toString('latin1', 8, 12) !== 'WEBP') return null;
  switch (head.toString('latin1', 12, 16)) {
    case 'VP8 ':
      return sane({ width: head.readUInt16LE(26) & 0x3fff, height: head.readUInt16LE(28) & 0x3fff });
    case 'VP8L': {
      const bits = head.readUInt32LE(21);
      return sane({ width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 });
    }
    case 'VP8X':
      return sane({ width: head.readUIntLE(24, 3) + 1, height: head.readUIntLE(27, 3) + 1 });
    default:
      return null;
  }
}

function isStartOfFrame(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

function jpegSize(bytes: ByteReader): ImageSize | null {
  const soi = bytes.read(0, 2);
  if (soi.length < 2 || soi[0] !== 0xff || soi[1] !== 0xd8) return null;
  let offset = 2;
  for (let segment = 0; segment < MAX_JPEG_SEGMENTS; segment++) {
    const header = bytes.read(offset, 4);
    if (header.length < 4 || header[0] !== 0xff) return null;
    const marker = header[1]!;
    // Fill bytes (0xFF 0xFF) may pad between segments; markers without a length carry no body.
    if (marker === 0xff) { offset += 1; continue; }
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) { offset += 2; continue; }
    if (isStartOfFrame(marker)) {
      const frame = bytes.read(offset + 5, 4);
      if (frame.length < 4) return null;
      return sane({ width: frame.readUInt16BE(2), height: frame.readUInt16BE(0) });
    }
    offset += 2 + header.readUInt16BE(2);
  }
  return null;
}
