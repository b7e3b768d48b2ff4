// Authenticates admin tokens: `Authorization: Bearer <admin token>` on every admin route but the document, and the console's sign-in.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ADMIN_TOKEN_PREFIXES, parseAdminToken } from '../../domain/admin-tokens.ts';
import { digestMatches, hashKey, keyDigest, parseKey, type KeyEnvironment } from '../../domain/api-keys.ts';
import { HttpError } from '../failures/http-error.ts';
import type { CountedAuthAttempt, RateBudgets } from '../limits/rate-limits.ts';
import type { AdminCredential, AdminTokenStore } from '../../store/store.ts';

/** `public`: answered without a token (the OpenAPI document). */
export type AdminAccess = 'token' | 'public';

declare module 'fastify' {
  interface FastifyRequest {
    /** Null before authentication or on a public route. */
    adminTokenId: string | null;
  }
  interface FastifyContextConfig {
    adminAccess?: AdminAccess;
  }
}

export interface AdminAuthOptions {
  readonly store: AdminTokenStore;
  readonly environment: KeyEnvironment;
  readonly touchIntervalMs: number;
  readonly onFailure?: (reason: string) => void;
  /** Compared against for an unknown token id; a test hands its own to see every byte read. */
  readonly decoyHash?: Uint8Array;
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

const WRONG_ENVIRONMENT: Readonly<Record<KeyEnvironment, string>> = {
  sandbox: `This is a sandbox admin token (${ADMIN_TOKEN_PREFIXES.sandbox}...); send it to the sandbox's admin API, or use a live admin token here.`,
  // Tokens made for the sandbox before it had its own marker carry the live one.
  live:
    `This is a live admin token (${ADMIN_TOKEN_PREFIXES.live}...); the sandbox's admin API takes only sandbox admin tokens ` +
    `(${ADMIN_TOKEN_PREFIXES.sandbox}..., made by account-api admin-tokens create --sandbox).`,
};

/** Judged without the store: a token id to look up, or the refusal. */
export function presentedAdminToken(header: string, environment: KeyEnvironment): { tokenId: string; token: string } {
  const match = /^(\S+) +(\S+) *$/.exec(header);
  const scheme = match?.[1]?.toLowerCase();
  if (scheme === 'basic') throw unauthenticated('wrong_credential_kind', WRONG_KIND);
  if (scheme !== 'bearer' || match?.[2] === undefined) {
    throw unauthenticated('malformed_admin_token', 'The Authorization header must be Bearer <admin token> (aapi_admin_...).');
  }
  const token = match[2];
  if (parseKey(token).ok || /^aapi_(live|sandbox)_/.test(token)) throw unauthenticated('wrong_credential_kind', WRONG_KIND);
  const parsed = parseAdminToken(token);
  if (parsed === null) {
    throw unauthenticated('malformed_admin_token', 'The admin token is not in the expected format (aapi_admin_...); check that it was copied whole.');
  }
  if (parsed.environment !== environment) throw unauthenticated('wrong_environment', WRONG_ENVIRONMENT[parsed.environment]);
  return { tokenId: parsed.tokenId, token };
}

/** What proves an admin token, shared by the Bearer header and the console's sign-in form: the same budget, the same refusals. */
function adminTokenJudge(rateBudgets: RateBudgets, options: AdminAuthOptions) {
  const lastTouched = new Map<string, number>();
  const decoyHash = options.decoyHash ?? DECOY_HASH;

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

  async function presented(request: FastifyRequest, reply: FastifyReply, header: string): Promise<{ tokenId: string; token: string }> {
    try {
      return presentedAdminToken(header, options.environment);
    } catch (error) {
      // A token of the other environment is a wrong address, not a guess: it spends nothing and is told where it belongs.
      if (!(error instanceof HttpError) || error.code !== 'wrong_environment') {
        // Refused without a store read, but still a failed attempt.
        const spent = rateBudgets.spendAuthAttempt(request, reply);
        if (spent instanceof Promise) await spent;
      }
      refused(request, error);
      throw error;
    }
  }

  /**
   * Judged even past the failed-attempt budget: a right token is never refused for others' failures (the loopback port shares
   * one address). Past it, a wrong token still gets the 429, so only the budget's guesses see a 401 (docs/api.md, Admin tokens).
   */
  async function judged(request: FastifyRequest, reply: FastifyReply, tokenId: string, token: string, counted: CountedAuthAttempt): Promise<void> {
    let credential: AdminCredential | null;
    try {
      credential = await options.store.findAdminToken(tokenId);
    } catch (error) {
      // The store could not answer (503): the attempt is given back.
      rateBudgets.refundAuthAttempt(request, counted.attempt);
      throw error;
    }
    const matches = digestMatches(keyDigest(token), credential?.hash ?? decoyHash);
    if (credential !== null && matches && !credential.revoked) {
      rateBudgets.refundAuthAttempt(request, counted.attempt);
      return;
    }
    // A revoked token's secret was right, so it hears "revoked" even past the budget; anything else there gets the 429.
    let error: HttpError;
    if (credential !== null && matches) error = unauthenticated('admin_token_revoked', 'This admin token has been revoked; ask for a new one.');
    else if (counted.over !== null) error = rateBudgets.refuseAuthAttempt(reply, counted.over);
    else error = unauthenticated('invalid_admin_token', 'The admin token is wrong.');
    refused(request, error);
    throw error;
  }

  /** The token's id once `header` (Bearer <token>) proved it; otherwise throws the refusal, having spent a failed attempt. */
  async function proven(request: FastifyRequest, reply: FastifyReply, header: string): Promise<string> {
    const { tokenId, token } = await presented(request, reply, header);
    // Spend an attempt before the store is asked, so concurrent guesses cannot all be judged within the budget.
    const counting = rateBudgets.countAuthAttempt(request);
    const counted = counting instanceof Promise ? await counting : counting;
    await judged(request, reply, tokenId, token, counted);
    touch(tokenId, request);
    return tokenId;
  }

  return { proven, refused };
}

/** The admin port's authentication step (pipeline.ts). */
export function adminAuthenticator(rateBudgets: RateBudgets, options: AdminAuthOptions) {
  const { proven, refused } = adminTokenJudge(rateBudgets, options);
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
    const tokenId = await proven(request, reply, header);
    request.adminTokenId = tokenId;
    const charged = chargeAdminToken(rateBudgets, request, reply, tokenId);
    if (charged !== undefined) await charged;
  };
}

/**
 * Spends one of the token's requests (ADMIN_RATE_LIMIT_PER_TOKEN), 429 past it: by its admin API calls and by its console
 * session's pages alike, so the console is no way around the budget. Its own budget, `admin:<id>`, never a key id.
 */
export function chargeAdminToken(rateBudgets: RateBudgets, request: FastifyRequest, reply: FastifyReply, tokenId: string): void | Promise<void> {
  request.keyId = `admin:${tokenId}`;
  return rateBudgets.charge(request, reply);
}

/**
 * The console's sign-in (src/console/sessions.ts): a token typed into a form is judged exactly as the same token in a Bearer
 * header, failed-attempt budget included. Resolves with its id, or throws the admin API's own refusal.
 */
export function adminTokenProof(rateBudgets: RateBudgets, options: AdminAuthOptions) {
  const { proven } = adminTokenJudge(rateBudgets, options);
  return (request: FastifyRequest, reply: FastifyReply, token: string): Promise<string> => proven(request, reply, `Bearer ${token}`);
}
