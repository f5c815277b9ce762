import zlib from 'node:zlib';

/**
 * The zlib level of a chart's pixels. Measured on the chart (960×264 RGBA, rows unfiltered,
 * BENCHMARKS.md): level 3 deflates a 12-report chart in ~0.8 ms to ~17 kB, where resvg's own PNG
 * encoder took ~3 ms for ~17 kB and a jagged 30-report chart came out smaller than resvg's too; level 4
 * and up cost 2–3× the time for a few kB. pngjs, with the same deflate, spent ~1.5 ms more on its JavaScript
 * filter and bit-packing passes, which unfiltered 8-bit RGBA does not need.
 */
export const PNG_DEFLATE_LEVEL = 3;

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** PNG colour type 6: RGBA, 8 bits a channel, straight (not premultiplied) alpha. */
const COLOUR_TYPE_RGBA = 6;

/**
 * The image data a PNG's IDAT chunk carries, before deflate: each row of RGBA pixels behind its filter
 * type byte, 0 (None), with straight alpha. resvg's `pixels` are premultiplied (its own asPng()
 * demultiplies as it encodes): the few pixels neither opaque nor clear (the plate's rounded corners)
 * are demultiplied here as tiny-skia does, `trunc(c / (a / 255) + 0.5)`, so the PNG holds the same
 * pixels resvg's would. `rows` may be passed to reuse its memory.
 *
 * The painter thread runs a copy of this in plain JavaScript (paint-chart.ts, it cannot load
 * TypeScript); `trend-chart.test.ts` checks the thread's PNG is byte for byte this one's.
 */
export function toScanlines(premultiplied: Uint8Array, width: number, height: number, rows?: Buffer): Buffer {
  const stride = width * 4;
  if (premultiplied.length !== stride * height)
    throw new RangeError(`${premultiplied.length} bytes are not ${width}×${height} RGBA pixels`);
  const out = rows && rows.length === (stride + 1) * height ? rows : Buffer.allocUnsafe((stride + 1) * height);
  for (let y = 0; y < height; y += 1) {
    const start = y * (stride + 1) + 1;
    out[start - 1] = 0;
    out.set(premultiplied.subarray(y * stride, (y + 1) * stride), start);
    for (let i = start + 3; i < start + stride; i += 4) {
      const alpha = out[i];
      if (alpha === 255 || alpha === 0) continue;
      const a = alpha / 255;
      out[i - 3] = Math.min(255, Math.trunc(out[i - 3] / a + 0.5));
      out[i - 2] = Math.min(255, Math.trunc(out[i - 2] / a + 0.5));
      out[i - 1] = Math.min(255, Math.trunc(out[i - 1] / a + 0.5));
    }
  }
  return out;
}

/** Premultiplied RGBA pixels (resvg's `pixels`) deflated as a PNG's image data. */
export function deflateRgba(premultiplied: Uint8Array, width: number, height: number): Buffer {
  return zlib.deflateSync(toScanlines(premultiplied, width, height), { level: PNG_DEFLATE_LEVEL });
}

/**
 * A PNG file around image data deflated by {@link deflateRgba} (or the painter thread): the signature,
 * IHDR, one IDAT and IEND, each chunk with its CRC-32 (PNG 1.2, ISO/IEC 15948 §5).
 */
export function wrapPng(width: number, height: number, idat: Uint8Array): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = COLOUR_TYPE_RGBA;
  // compression (0: deflate), filter method (0) and interlace (0: none) stay 0
  return Buffer.concat([SIGNATURE, ...chunk('IHDR', header), ...chunk('IDAT', idat), ...chunk('IEND', Buffer.alloc(0))]);
}

function chunk(type: string, data: Uint8Array): Buffer[] {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  // The CRC covers the chunk's type and data, not its length.
  crc.writeUInt32BE(zlib.crc32(data, zlib.crc32(type)), 0);
  return [head, Buffer.from(data.buffer, data.byteOffset, data.byteLength), crc];
}
