/**
 * The header of a PNG, read by hand (no PNG library is a dependency): the 8-byte signature, then
 * the IHDR chunk with width, height, bit depth and colour type, its CRC checked; and that the file
 * ends with an IEND chunk. Enough to tell an image that decodes from bytes that only look like one.
 */
import { crc32 } from 'node:zlib';

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export interface PngHeader {
  width: number;
  height: number;
  bitDepth: number;
  colorType: number;
}

export function readPngHeader(bytes: Uint8Array): PngHeader {
  const buf = Buffer.from(bytes);
  if (buf.length < 45 || !buf.subarray(0, 8).equals(PNG_SIGNATURE)) throw new Error('not a PNG: bad signature');
  const length = buf.readUInt32BE(8);
  if (buf.toString('latin1', 12, 16) !== 'IHDR' || length !== 13) throw new Error('not a PNG: the first chunk is not IHDR');
  const crc = buf.readUInt32BE(16 + length);
  if (crc32(buf.subarray(12, 16 + length)) !== crc) throw new Error('not a PNG: IHDR CRC mismatch');
  if (buf.toString('latin1', buf.length - 8, buf.length - 4) !== 'IEND') throw new Error('not a PNG: no IEND at the end');
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20), bitDepth: buf[24]!, colorType: buf[25]! };
}
