// Admin token format: the API keys' rules under a prefix of its own, so neither port mistakes one credential for the other.
import { composePrefixed, hashKey, idOfPrefixed, KEY_ID_PATTERN, randomIdAndSecret, type KeyEnvironment } from './api-keys.ts';

/**
 * One marker per environment, so a token sent to the other server is told so, not judged a guess. Both begin `aapi_admin_`
 * for scanners; older live tokens are unchanged, and a base62 id is never `sandbox_`.
 */
export const ADMIN_TOKEN_PREFIXES: Readonly<Record<KeyEnvironment, string>> = {
  live: 'aapi_admin_',
  sandbox: 'aapi_admin_sandbox_',
};

export interface IssuedAdminToken {
  readonly tokenId: string;
  /** Shown once, never stored. */
  readonly token: string;
  readonly hash: Buffer;
  readonly displayPrefix: string;
}

/** `environment`: the server that will accept it (live unless said). */
export function composeAdminToken(tokenId: string, secret: string, environment: KeyEnvironment = 'live'): IssuedAdminToken {
  const prefix = ADMIN_TOKEN_PREFIXES[environment];
  const token = composePrefixed(prefix, tokenId, secret);
  return { tokenId, token, hash: hashKey(token), displayPrefix: `${prefix}${tokenId}` };
}

export function issueAdminToken(environment: KeyEnvironment = 'live'): IssuedAdminToken {
  const { id, secret } = randomIdAndSecret();
  return composeAdminToken(id, secret, environment);
}

export interface ParsedAdminToken {
  readonly environment: KeyEnvironment;
  readonly tokenId: string;
}

/** Null when shape or checksum is wrong, without touching the store. */
export function parseAdminToken(token: string): ParsedAdminToken | null {
  // The sandbox's marker first: it begins with the live one.
  const sandboxId = idOfPrefixed(ADMIN_TOKEN_PREFIXES.sandbox, token);
  if (sandboxId !== null) return { environment: 'sandbox', tokenId: sandboxId };
  const liveId = idOfPrefixed(ADMIN_TOKEN_PREFIXES.live, token);
  return liveId === null ? null : { environment: 'live', tokenId: liveId };
}

/** Either environment's prefix: to tell a caller they sent the wrong kind. */
export function looksLikeAdminToken(token: string): boolean {
  return token.startsWith(ADMIN_TOKEN_PREFIXES.live);
}

export const ADMIN_TOKEN_ID_PATTERN = KEY_ID_PATTERN;

export const ADMIN_TOKEN_LABEL_MAX = 100;

/** Who holds a token (billing, support-tool): required, short, printable. */
export function checkAdminTokenLabel(label: string): string | null {
  const trimmed = label.trim();
  if (trimmed === '' || trimmed.length > ADMIN_TOKEN_LABEL_MAX || /\p{Cc}/u.test(trimmed)) return null;
  return trimmed;
}
