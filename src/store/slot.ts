/**
 * Redis Cluster's key slot: CRC16 (XMODEM) of the key's hash tag (the text between the first
 * `{` and the next `}`, when not empty) or of the whole key, modulo 16,384. Used to choose
 * partition tags that spread over the slot space (and so over the shards); ioredis computes
 * the same thing to route commands.
 */
const TABLE = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[i] = crc;
  }
  return table;
})();

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ (TABLE[((crc >> 8) ^ byte) & 0xff] as number);
  return crc;
}

export const SLOTS = 16_384;

export function hashTagOf(key: string): string {
  const open = key.indexOf('{');
  if (open < 0) return key;
  const close = key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

export function keySlot(key: string): number {
  return crc16(new TextEncoder().encode(hashTagOf(key))) % SLOTS;
}
