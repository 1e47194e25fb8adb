/**
 * Minimal image files of a given size for the prompt estimate's tests: each holds a valid header of
 * its format (PNG signature + IHDR, GIF logical screen, WebP VP8/VP8L/VP8X, JPEG segments up to a
 * SOF0) followed by filler bytes standing in for the pixel data, which the estimate never reads.
 */

/** A PNG of `width`×`height`: signature, IHDR chunk, `fillerBytes` of filler. */
export function png(width: number, height: number, fillerBytes = 64): Buffer {
  const ihdr = Buffer.alloc(25);
  ihdr.writeUInt32BE(13, 0);
  ihdr.write('IHDR', 4, 'latin1');
  ihdr.writeUInt32BE(width, 8);
  ihdr.writeUInt32BE(height, 12);
  ihdr.writeUInt8(8, 16);
  ihdr.writeUInt8(6, 17);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), ihdr, Buffer.alloc(fillerBytes, 0x5a)]);
}

export function gif(width: number, height: number): Buffer {
  const head = Buffer.alloc(13);
  head.write('GIF89a', 0, 'latin1');
  head.writeUInt16LE(width, 6);
  head.writeUInt16LE(height, 8);
  return Buffer.concat([head, Buffer.alloc(32, 0x3b)]);
}

/** A WebP of `kind` (`VP8 ` lossy, `VP8L` lossless, `VP8X` extended). */
export function webp(kind: 'VP8 ' | 'VP8L' | 'VP8X', width: number, height: number): Buffer {
  const file = Buffer.alloc(40);
  file.write('RIFF', 0, 'latin1');
  file.writeUInt32LE(32, 4);
  file.write('WEBP', 8, 'latin1');
  file.write(kind, 12, 'latin1');
  if (kind === 'VP8 ') {
    file.writeUInt16LE(width, 26);
    file.writeUInt16LE(height, 28);
  } else if (kind === 'VP8L') {
    file.writeUInt8(0x2f, 20);
    file.writeUInt32LE(((width - 1) & 0x3fff) | (((height - 1) & 0x3fff) << 14), 21);
  } else {
    file.writeUIntLE(width - 1, 24, 3);
    file.writeUIntLE(height - 1, 27, 3);
  }
  return file;
}

function segment(marker: number, body: Buffer): Buffer {
  const head = Buffer.from([0xff, marker, 0, 0]);
  head.writeUInt16BE(body.length + 2, 2);
  return Buffer.concat([head, body]);
}

/** A JPEG: SOI, an APP0, an APP1 of `exifBytes` (a camera's EXIF block with its thumbnail), DQT, SOF0. */
export function jpeg(width: number, height: number, exifBytes = 100): Buffer {
  const sof = Buffer.alloc(15);
  sof.writeUInt8(8, 0);
  sof.writeUInt16BE(height, 1);
  sof.writeUInt16BE(width, 3);
  sof.writeUInt8(3, 5);
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    segment(0xe0, Buffer.from('JFIF\0\x01\x01\0\0\x01\0\x01\0\0', 'latin1')),
    segment(0xe1, Buffer.alloc(exifBytes, 0x45)),
    segment(0xdb, Buffer.alloc(65, 1)),
    segment(0xc0, sof),
    Buffer.alloc(64, 0x11),
  ]);
}

/** `bytes` as a base64 data URL of `mediaType`. */
export function dataUrl(bytes: Buffer, mediaType = 'image/png'): string {
  return `data:${mediaType};base64,${bytes.toString('base64')}`;
}
