// What authentication checks before any store read: the Authorization header holds Basic credentials, the password is an
// API key of the right format and checksum, and of this server's environment. Each refusal says what to send instead.
import { looksLikeAdminToken } from '../../domain/admin-tokens.ts';
import { parseKey, type KeyEnvironment, type ParsedKey } from '../../domain/api-keys.ts';
import type { HttpError } from '../failures/http-error.ts';
import type { BasicCredentials } from './basic-credentials.ts';

/** Builds the port's 401 (with its WWW-Authenticate challenge). */
export type Unauthenticated = (code: string, message: string) => HttpError;

// An admin token sent here (as a Bearer token, or pasted as the password) is told where it belongs, not just "malformed".
const adminTokenHere = (unauthenticated: Unauthenticated) =>
  unauthenticated(
    'wrong_credential_kind',
    'This is an admin token; this port takes HTTP Basic credentials (username and API key). Send admin tokens to the admin API (ADMIN_PORT).',
  );

/** The key the credentials carry, or the 401 that refuses them thrown; `credentials` null: the header was not Basic. */
export function wellFormedKey(
  credentials: BasicCredentials | null,
  header: string,
  environment: KeyEnvironment,
  unauthenticated: Unauthenticated,
): ParsedKey {
  if (credentials === null) {
    if (/^bearer +aapi_admin_/i.test(header)) throw adminTokenHere(unauthenticated);
    throw unauthenticated(
      'malformed_credentials',
      'The Authorization header must be HTTP Basic credentials: base64 of USERNAME:API_KEY (curl -u USERNAME:API_KEY).',
    );
  }
  const parsed = parseKey(credentials.password);
  if (!parsed.ok && looksLikeAdminToken(credentials.password)) throw adminTokenHere(unauthenticated);
  if (!parsed.ok) {
    throw unauthenticated(
      'malformed_key',
      'The API key is not in the expected format (aapi_live_... or aapi_sandbox_...); check that it was copied whole.',
    );
  }
  const { key } = parsed;
  if (key.environment !== environment) {
    throw unauthenticated(
      'wrong_environment',
      key.environment === 'sandbox'
        ? 'This is a sandbox key; send it to the sandbox server, or use a live key here.'
        : 'This is a live key; the sandbox accepts only sandbox keys (aapi_sandbox_...).',
    );
  }
  return key;
}
