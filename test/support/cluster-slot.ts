// Test support: Redis Cluster's slot of a key, computed as the cluster does, to check that one script's keys share a slot.

/** CRC16/XMODEM of the key's hash tag (the text inside the first {...}, when not empty), else of the whole key, mod 16384. */
export function clusterSlot(key: string): number {
  const open = key.indexOf('{');
  const close = open === -1 ? -1 : key.indexOf('}', open + 1);
  const hashed = close > open + 1 ? key.slice(open + 1, close) : key;
  let crc = 0;
  for (const byte of Buffer.from(hashed)) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}
