// Admin token format: the API keys' rules (a scannable prefix, a public id, a random secret, a checksum, only a hash stored)
// under a prefix of its own, so neither port can mistake one credential for the other.
import { composePrefixed, hashKey, idOfPrefixed, KEY_ID_PATTERN, randomIdAndSecret } from './api-keys.ts';

export const ADMIN_TOKEN_PREFIX = 'aapi_admin_';

export interface IssuedAdminToken {
  readonly tokenId: string;
  /** The whole token: shown once, never stored. */
  readonly token: string;
  readonly hash: Buffer;
  readonly displayPrefix: string;
}

export function composeAdminToken(tokenId: string, secret: string): IssuedAdminToken {
  const token = composePrefixed(ADMIN_TOKEN_PREFIX, tokenId, secret);
  return { tokenId, token, hash: hashKey(token), displayPrefix: `${ADMIN_TOKEN_PREFIX}${tokenId}` };
}

export function issueAdminToken(): IssuedAdminToken {
  const { id, secret } = randomIdAndSecret();
  return composeAdminToken(id, secret);
}

/** The token's id when its shape and checksum are right; null otherwise, without touching the store. */
export function adminTokenId(token: string): string | null {
  return idOfPrefixed(ADMIN_TOKEN_PREFIX, token);
}

/** Whether a presented secret looks like an admin token at all (its prefix), to tell a caller they sent the wrong kind. */
export function looksLikeAdminToken(token: string): boolean {
  return token.startsWith(ADMIN_TOKEN_PREFIX);
}

export const ADMIN_TOKEN_ID_PATTERN = KEY_ID_PATTERN;

export const ADMIN_TOKEN_LABEL_MAX = 100;

/** Labels name who holds a token (billing, support-tool): required, short, printable. */
export function checkAdminTokenLabel(label: string): string | null {
  const trimmed = label.trim();
  if (trimmed === '' || trimmed.length > ADMIN_TOKEN_LABEL_MAX || /\p{Cc}/u.test(trimmed)) return null;
  return trimmed;
}
