// API key format: a scannable prefix, a public key id, a random secret and a checksum; only a hash is stored.
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

/** Which server a key belongs to: a sandbox key must never open a live account, nor the reverse. */
export type KeyEnvironment = 'live' | 'sandbox';

export const KEY_PREFIXES: Readonly<Record<KeyEnvironment, string>> = {
  live: 'aapi_live_',
  sandbox: 'aapi_sandbox_',
};

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const KEY_ID_LENGTH = 12;
const SECRET_LENGTH = 32; // 32 base62 characters: about 190 bits of entropy
const CHECKSUM_LENGTH = 6; // CRC32 fits in 6 base62 digits
const BODY_LENGTH = KEY_ID_LENGTH + SECRET_LENGTH + CHECKSUM_LENGTH;

export interface ParsedKey {
  readonly environment: KeyEnvironment;
  /** Non-secret, stored in clear: finds, lists and revokes the key. */
  readonly keyId: string;
  /** Hashed for comparison, never stored or logged. */
  readonly token: string;
}

export type KeyParseResult = { ok: true; key: ParsedKey } | { ok: false; reason: 'malformed' };

export interface IssuedKey extends ParsedKey {
  readonly hash: Buffer;
  readonly displayPrefix: string;
}

/** Without modulo bias: bytes of 248 and over are thrown away (248 = 4 * 62). */
export function randomBase62(length: number, random: (size: number) => Buffer = randomBytes): string {
  let out = '';
  while (out.length < length) {
    for (const byte of random(length * 2)) {
      if (byte < 248) out += ALPHABET[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

function base62Fixed(value: number, width: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < width; i++) {
    out = ALPHABET[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}

function checksumOf(prefixAndBody: string): string {
  return base62Fixed(crc32(prefixAndBody), CHECKSUM_LENGTH);
}

// CRC-32 (zlib's polynomial), from a 256-entry table.
const CRC_TABLE = (() => {
  const table = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c;
  }
  return table;
})();

/** Each character taken as one byte (callers pass only ASCII). */
function crcOfAscii(state: number, text: string): number {
  let crc = state;
  for (let i = 0; i < text.length; i++) crc = CRC_TABLE[(crc ^ text.charCodeAt(i)) & 0xff]! ^ (crc >>> 8);
  return crc;
}

const prefixStates = new Map<string, number>();

/**
 * BODY_LENGTH base62 characters ending in their checksum, checked in one loop that also feeds the CRC: it runs on every
 * authenticated request (docs/operations.md#smaller-measured-choices). Keys are issued with zlib's crc32 (checksumOf), so
 * every test parsing an issued key holds the two together.
 */
function isChecksummedBody(token: string, prefix: string): boolean {
  const from = prefix.length;
  if (token.length - from !== BODY_LENGTH) return false;
  let crc = prefixStates.get(prefix);
  if (crc === undefined) {
    crc = crcOfAscii(-1, prefix);
    prefixStates.set(prefix, crc);
  }
  const end = token.length - CHECKSUM_LENGTH;
  for (let i = from; i < end; i++) {
    const c = token.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122))) return false;
    crc = CRC_TABLE[(crc ^ c) & 0xff]! ^ (crc >>> 8);
  }
  // Compared digit by digit with what it should be, so matching digits are base62 too.
  let rest = (crc ^ -1) >>> 0;
  for (let i = CHECKSUM_LENGTH - 1; i >= 0; i--) {
    if (token.charCodeAt(end + i) !== ALPHABET.charCodeAt(rest % 62)) return false;
    rest = Math.floor(rest / 62);
  }
  return true;
}

/** `prefix`, id, secret, checksum: admin tokens use it with their own prefix (domain/admin-tokens.ts). */
export function composePrefixed(prefix: string, id: string, secret: string): string {
  const head = `${prefix}${id}${secret}`;
  return head + checksumOf(head);
}

/** Null when its shape or checksum is wrong. */
export function idOfPrefixed(prefix: string, token: string): string | null {
  if (!token.startsWith(prefix)) return null;
  if (!isChecksummedBody(token, prefix)) return null;
  return token.slice(prefix.length, prefix.length + KEY_ID_LENGTH);
}

export function randomIdAndSecret(): { id: string; secret: string } {
  return { id: randomBase62(KEY_ID_LENGTH), secret: randomBase62(SECRET_LENGTH) };
}

export function hashKey(token: string): Buffer {
  // One-shot form: no Hash object per call (docs/operations.md#smaller-measured-choices).
  return hash('sha256', token, 'buffer');
}

export function displayPrefixOf(environment: KeyEnvironment, keyId: string): string {
  return `${KEY_PREFIXES[environment]}${keyId}`;
}

/** `issueKey` is the normal way in; this one serves deterministic sandbox keys. */
export function composeKey(environment: KeyEnvironment, keyId: string, secret: string): IssuedKey {
  const head = `${KEY_PREFIXES[environment]}${keyId}${secret}`;
  const token = head + checksumOf(head);
  return { environment, keyId, token, hash: hashKey(token), displayPrefix: displayPrefixOf(environment, keyId) };
}

export function issueKey(environment: KeyEnvironment): IssuedKey {
  return composeKey(environment, randomBase62(KEY_ID_LENGTH), randomBase62(SECRET_LENGTH));
}

/** Shape and checksum only: a mistyped key is refused without touching the store. */
export function parseKey(token: string): KeyParseResult {
  for (const environment of ['live', 'sandbox'] as const) {
    const prefix = KEY_PREFIXES[environment];
    if (!token.startsWith(prefix)) continue;
    if (!isChecksummedBody(token, prefix)) return { ok: false, reason: 'malformed' };
    return { ok: true, key: { environment, keyId: token.slice(prefix.length, prefix.length + KEY_ID_LENGTH), token } };
  }
  return { ok: false, reason: 'malformed' };
}

/** SHA-256 as a 32-character latin1 string: cheaper per request than hashKey's Buffer allocation. */
export function keyDigest(token: string): string {
  return hash('sha256', token, 'binary'); // 'binary': Node's name for latin1, one character per byte
}

/** Constant time: every byte is looked at. */
export function digestMatches(digest: string, stored: Uint8Array): boolean {
  const length = stored.length;
  if (digest.length !== length) return false;
  let difference = 0;
  for (let i = 0; i < length; i++) difference |= digest.charCodeAt(i) ^ stored[i]!;
  return difference === 0;
}

export function keyMatches(token: string, storedHash: Uint8Array): boolean {
  return hashesMatch(hashKey(token), storedHash);
}

/** Constant time, for a caller that hashed the presented key once for several comparisons. */
export function hashesMatch(presented: Uint8Array, stored: Uint8Array): boolean {
  return stored.length === presented.length && timingSafeEqual(presented, stored);
}

export const KEY_ID_PATTERN = new RegExp(`^[0-9A-Za-z]{${KEY_ID_LENGTH}}$`);

export type KeyState = 'active' | 'expired' | 'revoked';

/** A key's state as of `now`: revoked wins over expired; a rolled key stays active until its overlap ends (its expiry). */
export function keyState(key: { readonly revokedAt: string | null; readonly expiresAt: string | null }, now = Date.now()): KeyState {
  if (key.revokedAt !== null) return 'revoked';
  if (key.expiresAt !== null && Date.parse(key.expiresAt) <= now) return 'expired';
  return 'active';
}
