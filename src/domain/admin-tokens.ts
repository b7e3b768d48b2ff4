// Admin token format: the API keys' rules (a scannable prefix, a public id, a random secret, a checksum, only a hash stored)
// under a prefix of its own, so neither port can mistake one credential for the other.
import { composePrefixed, hashKey, idOfPrefixed, KEY_ID_PATTERN, randomIdAndSecret, type KeyEnvironment } from './api-keys.ts';

/**
 * One marker per environment, as keys have, so a token sent to the other server is told so rather than judged a guess. Both
 * begin `aapi_admin_`: secret scanners and the public port recognise either by it, and live tokens made before the sandbox had
 * a marker of its own are unchanged. No live token is mistaken for a sandbox one: an id is base62, never `sandbox_`.
 */
export const ADMIN_TOKEN_PREFIXES: Readonly<Record<KeyEnvironment, string>> = {
  live: 'aapi_admin_',
  sandbox: 'aapi_admin_sandbox_',
};

export interface IssuedAdminToken {
  readonly tokenId: string;
  /** The whole token: shown once, never stored. */
  readonly token: string;
  readonly hash: Buffer;
  readonly displayPrefix: string;
}

/** `environment`: the server's that will accept it (live unless said). */
export function composeAdminToken(tokenId: string, secret: string, environment: KeyEnvironment = 'live'): IssuedAdminToken {
  const prefix = ADMIN_TOKEN_PREFIXES[environment];
  const token = composePrefixed(prefix, tokenId, secret);
  return { tokenId, token, hash: hashKey(token), displayPrefix: `${prefix}${tokenId}` };
}

export function issueAdminToken(environment: KeyEnvironment = 'live'): IssuedAdminToken {
  const { id, secret } = randomIdAndSecret();
  return composeAdminToken(id, secret, environment);
}

/** A token whose shape and checksum are right: its environment (by its marker) and its id. */
export interface ParsedAdminToken {
  readonly environment: KeyEnvironment;
  readonly tokenId: string;
}

/** The token's environment and id when its shape and checksum are right; null otherwise, without touching the store. */
export function parseAdminToken(token: string): ParsedAdminToken | null {
  // The sandbox's marker first: it begins with the live one.
  const sandboxId = idOfPrefixed(ADMIN_TOKEN_PREFIXES.sandbox, token);
  if (sandboxId !== null) return { environment: 'sandbox', tokenId: sandboxId };
  const liveId = idOfPrefixed(ADMIN_TOKEN_PREFIXES.live, token);
  return liveId === null ? null : { environment: 'live', tokenId: liveId };
}

/** Whether a presented secret looks like an admin token at all (its prefix, either environment's), to tell a caller they sent the wrong kind. */
export function looksLikeAdminToken(token: string): boolean {
  return token.startsWith(ADMIN_TOKEN_PREFIXES.live);
}

export const ADMIN_TOKEN_ID_PATTERN = KEY_ID_PATTERN;

export const ADMIN_TOKEN_LABEL_MAX = 100;

/** Labels name who holds a token (billing, support-tool): required, short, printable. */
export function checkAdminTokenLabel(label: string): string | null {
  const trimmed = label.trim();
  if (trimmed === '' || trimmed.length > ADMIN_TOKEN_LABEL_MAX || /\p{Cc}/u.test(trimmed)) return null;
  return trimmed;
}
