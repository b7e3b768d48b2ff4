// Authenticates admin API callers from `Authorization: Bearer <admin token>`; every admin route needs one, except the document.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { adminTokenId } from '../domain/admin-tokens.ts';
import { digestMatches, hashKey, keyDigest, parseKey } from '../domain/api-keys.ts';
import { HttpError } from '../http/failures/http-error.ts';
import type { AuthAttempt, RateBudgets } from '../http/limits/rate-limits.ts';
import type { Store } from '../store/store.ts';

/** `token`: an admin token is required. `public`: answered without one (the OpenAPI document). */
export type AdminAccess = 'token' | 'public';

declare module 'fastify' {
  interface FastifyRequest {
    /** The id of the admin token that authenticated this request; null before authentication or on a public route. */
    adminTokenId: string | null;
  }
  interface FastifyContextConfig {
    adminAccess?: AdminAccess;
  }
}

export interface AdminAuthOptions {
  readonly store: Store;
  /** How often at most a token's `last used` time is written. */
  readonly touchIntervalMs: number;
  readonly onFailure?: (reason: string) => void;
}

// Compared against when the token id is unknown, so an unknown token costs the same work as a wrong one.
const DECOY_HASH = hashKey('aapi_admin_decoy');
const CHALLENGE = { 'WWW-Authenticate': 'Bearer realm="account-api admin"' };

function unauthenticated(code: string, message: string): HttpError {
  return new HttpError(401, code, message, { headers: CHALLENGE });
}

function repeatsAuthorization(rawHeaders: readonly string[]): boolean {
  let seen = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === 'authorization') seen++;
  return seen > 1;
}

const WRONG_KIND =
  'This port is the admin API: it takes Authorization: Bearer <admin token> (account-api admin-tokens create). ' +
  'HTTP Basic credentials and API keys are for the public API.';

/** What the header holds, judged without the store: a token id to look up, or the refusal to answer. */
export function presentedAdminToken(header: string): { tokenId: string; token: string } {
  const match = /^(\S+) +(\S+) *$/.exec(header);
  const scheme = match?.[1]?.toLowerCase();
  if (scheme === 'basic') throw unauthenticated('wrong_credential_kind', WRONG_KIND);
  if (scheme !== 'bearer' || match?.[2] === undefined) {
    throw unauthenticated('malformed_admin_token', 'The Authorization header must be Bearer <admin token> (aapi_admin_...).');
  }
  const token = match[2];
  if (parseKey(token).ok || /^aapi_(live|sandbox)_/.test(token)) throw unauthenticated('wrong_credential_kind', WRONG_KIND);
  const tokenId = adminTokenId(token);
  if (tokenId === null) {
    throw unauthenticated('malformed_admin_token', 'The admin token is not in the expected format (aapi_admin_...); check that it was copied whole.');
  }
  return { tokenId, token };
}

/** The admin port's authentication step for the pipeline (src/http/pipeline.ts): Bearer admin tokens, spending `rateBudgets`. */
export function adminAuthenticator(rateBudgets: RateBudgets, options: AdminAuthOptions) {
  const lastTouched = new Map<string, number>();

  function touch(tokenId: string, request: FastifyRequest): void {
    const now = Date.now();
    const previous = lastTouched.get(tokenId);
    if (previous !== undefined && now - previous < options.touchIntervalMs) return;
    lastTouched.set(tokenId, now);
    options.store.touchAdminToken(tokenId, new Date(now)).catch((error: unknown) => {
      request.log.warn({ err: error }, 'could not record admin token use');
    });
  }

  function refused(request: FastifyRequest, error: unknown): void {
    if (!(error instanceof HttpError) || error.statusCode !== 401) return;
    request.log.info({ reason: error.code }, 'admin auth failure');
    options.onFailure?.(error.code);
  }

  return async function adminAuthenticate(request: FastifyRequest, reply: FastifyReply, access: AdminAccess): Promise<void> {
    const header = request.headers.authorization;
    if (access === 'public' && header === undefined) return rateBudgets.charge(request, reply);
    if (header === undefined) {
      const error = unauthenticated('admin_token_required', 'The admin API needs Authorization: Bearer <admin token> (account-api admin-tokens create).');
      refused(request, error);
      throw error;
    }
    if (repeatsAuthorization(request.raw.rawHeaders)) {
      throw new HttpError(400, 'duplicate_header', 'The request has more than one Authorization header; send exactly one.');
    }
    // Every attempt spends the address's failed-authentication budget before the store is asked; a right one gets it back.
    let attempt: AuthAttempt;
    try {
      const spent = rateBudgets.spendAuthAttempt(request, reply);
      attempt = spent instanceof Promise ? await spent : spent;
    } catch (error) {
      refused(request, error);
      throw error;
    }
    let tokenId: string;
    try {
      const presented = presentedAdminToken(header);
      const credential = await options.store.findAdminToken(presented.tokenId);
      const matches = digestMatches(keyDigest(presented.token), credential?.hash ?? DECOY_HASH);
      if (credential === null || !matches) throw unauthenticated('invalid_admin_token', 'The admin token is wrong.');
      if (credential.revoked) throw unauthenticated('admin_token_revoked', 'This admin token has been revoked; ask for a new one.');
      tokenId = presented.tokenId;
    } catch (error) {
      // The store could not answer (503): no guess was judged, so the attempt is given back.
      if (!(error instanceof HttpError)) rateBudgets.refundAuthAttempt(request, attempt);
      refused(request, error);
      throw error;
    }
    rateBudgets.refundAuthAttempt(request, attempt);
    request.adminTokenId = tokenId;
    // Its own budget, apart from any API key's: its window is named `admin:<id>` (`key:admin:<id>` in Redis), never a key id.
    request.keyId = `admin:${tokenId}`;
    touch(tokenId, request);
    const charged = rateBudgets.charge(request, reply);
    if (charged !== undefined) await charged;
  };
}
