// Authenticates callers from Basic credentials (username + API key) and enforces each route's `access`.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { looksLikeAdminToken } from '../../domain/admin-tokens.ts';
import { digestMatches, hashKey, keyDigest, parseKey, type KeyEnvironment, type ParsedKey } from '../../domain/api-keys.ts';
import { EXPIRY_WARNING_MS } from '../../operations/expiry.ts';
import type { Account, Credential, CredentialStore } from '../../store/store.ts';
import { parseBasicCredentials, type BasicCredentials } from './basic-credentials.ts';
import { HttpError } from '../failures/http-error.ts';
import type { AuthAttempt, KeyCharge, RateBudgets } from '../limits/rate-limits.ts';
import { loggableUsername } from '../observability/key-redaction.ts';
import { keyUseRecorder } from './key-use.ts';
import { VerifiedKeys } from './verified-keys.ts';
import { VersionedCredentials } from './versioned-credentials.ts';

/** `public`: credentials optional, checked when sent. `premium`: a valid key of a Premium account. */
export type Access = 'public' | 'premium';

declare module 'fastify' {
  interface FastifyRequest {
    /** Null on a public route called without credentials. */
    caller: Account | null;
    credential: Credential | null;
  }
  interface FastifyContextConfig {
    access?: Access;
  }
}

export interface AuthenticateOptions {
  readonly store: CredentialStore;
  readonly environment: KeyEnvironment;
  readonly realm: string;
  /** At most one `last used` write per key per interval (per process, or deployment-wide when Redis counts the charge). */
  readonly touchIntervalMs: number;
  /** PostgreSQL + Redis: credentials cached per account credentials version (versioned-credentials.ts); null: ask the store. */
  readonly credentialCache?: {
    readonly maxAgeMs: number;
    readonly maxEntries: number;
    /** Hands over the cache's reset, to be called whenever Redis reconnects (a restart or failover may bring back old versions). */
    readonly resetOnReconnect?: (reset: () => void) => void;
  } | null;
  readonly onFailure?: (reason: string) => void;
  /** Compared against for an unknown key id; a test hands its own to see every byte read. */
  readonly decoyHash?: Uint8Array;
}

function repeatsHeader(rawHeaders: readonly string[], name: string): boolean {
  let seen = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const header = rawHeaders[i]!;
    if (header.length !== name.length || header.toLowerCase() !== name) continue;
    if (seen) return true;
    seen = true;
  }
  return false;
}

/** Sent while a key has less than EXPIRY_WARNING_MS left: when it expires, in ISO 8601. */
export const KEY_EXPIRES_HEADER = 'API-Key-Expires';

// Compared against when the key id is unknown, so an unknown user costs the same work as a wrong key.
const DECOY_HASH = hashKey('aapi_live_decoy');

function checkAccess(request: FastifyRequest, access: Access): void {
  if (access === 'premium' && !request.caller!.premium) {
    throw new HttpError(403, 'premium_required', 'This endpoint needs a Premium account; this account does not have Premium.');
  }
  if (request.credential!.scope === 'read' && access === 'premium' && request.method !== 'GET' && request.method !== 'HEAD') {
    throw new HttpError(403, 'insufficient_scope', `This call needs a key of scope 'write'; this key's scope is 'read' (GET only).`);
  }
}

/** Throws the 400, 401, 403 or 429 that refuses the request. */
export type Authenticate = (request: FastifyRequest, reply: FastifyReply, access: Access) => Promise<void> | void;

/** The pipeline's authentication step (src/http/pipeline.ts). */
export function authenticator(rateBudgets: RateBudgets, options: AuthenticateOptions): Authenticate {
  const challenge = { 'WWW-Authenticate': `Basic realm="${options.realm}", charset="UTF-8"` };
  const unauthenticated = (code: string, message: string) => new HttpError(401, code, message, { headers: challenge });
  const recordUse = keyUseRecorder(options.store, options.touchIntervalMs);
  // Only keys seen right are served from the cache: remember at least as many as it may hold.
  const verifiedKeys = new VerifiedKeys(Math.max(10_000, options.credentialCache?.maxEntries ?? 0));
  const cache = options.credentialCache == null || options.credentialCache.maxAgeMs === 0 ? null : new VersionedCredentials(options.credentialCache);
  if (cache !== null) options.credentialCache?.resetOnReconnect?.(() => cache.clear());
  const decoyHash = options.decoyHash ?? DECOY_HASH;

  type Presented = { readonly credentials: BasicCredentials; readonly owner: string; readonly key: ParsedKey; readonly digest: string };

  // An admin token sent here (as a Bearer token, or pasted as the password) is told where it belongs, not just "malformed".
  const adminTokenHere = () =>
    unauthenticated(
      'wrong_credential_kind',
      'This is an admin token; this port takes HTTP Basic credentials (username and API key). Send admin tokens to the admin API (ADMIN_PORT).',
    );

/** Checks what needs no store (header and key shape, checksum, environment); hashes once. */
  function presented(credentials: BasicCredentials | null, header: string): Presented {
    if (credentials === null) {
      if (/^bearer +aapi_admin_/i.test(header)) throw adminTokenHere();
      throw unauthenticated(
        'malformed_credentials',
        'The Authorization header must be HTTP Basic credentials: base64 of USERNAME:API_KEY (curl -u USERNAME:API_KEY).',
      );
    }
    const parsed = parseKey(credentials.password);
    if (!parsed.ok && looksLikeAdminToken(credentials.password)) throw adminTokenHere();
    if (!parsed.ok) {
      throw unauthenticated(
        'malformed_key',
        'The API key is not in the expected format (aapi_live_... or aapi_sandbox_...); check that it was copied whole.',
      );
    }
    const key = parsed.key;
    if (key.environment !== options.environment) {
      throw unauthenticated(
        'wrong_environment',
        key.environment === 'sandbox'
          ? 'This is a sandbox key; send it to the sandbox server, or use a live key here.'
          : 'This is a live key; the sandbox accepts only sandbox keys (aapi_sandbox_...).',
      );
    }
    return { credentials, owner: credentials.username.toLowerCase(), key, digest: keyDigest(key.token) };
  }

  function identify({ owner, digest }: Presented, credential: Credential | null): Credential {
    const hashMatches = digestMatches(digest, credential?.hash ?? decoyHash);
    const ownerMatches = credential !== null && credential.account.username.toLowerCase() === owner;
    if (credential === null || !hashMatches || !ownerMatches) {
      throw unauthenticated('invalid_credentials', 'The username or API key is wrong.');
    }
    if (credential.revoked) {
      throw unauthenticated('key_revoked', 'This API key has been revoked; ask the account holder for a new one.');
    }
    // The row's expiry against the clock, at every request: a cached row never carries a stale verdict.
    if (credential.expiresAtMs !== null && credential.expiresAtMs <= Date.now()) {
      const at = new Date(credential.expiresAtMs).toISOString();
      throw unauthenticated('key_expired', `This API key expired at ${at}; use its successor, or ask the account holder for a new one.`);
    }
    return credential;
  }

  // Usernames are not secret and help spot a guesser; the key never appears, even when pasted into the user part.
  function reportFailure(request: FastifyRequest, reason: string, username: string | undefined): void {
    request.log.info(username === undefined ? { reason } : { reason, username: loggableUsername(username) }, 'auth failure');
    options.onFailure?.(reason);
  }

  /** Runs `next` at once when `value` is not a promise, so the common request never waits a microtask. */
  function then<T>(value: T | Promise<T>, next: (value: T) => void | Promise<void>): void | Promise<void> {
    return value instanceof Promise ? value.then(next) : next(value);
  }

  /** Asks the cache (with the version the vouched key's charge read first) or the store, judges, then admits. */
  function lookUp(request: FastifyRequest, reply: FastifyReply, access: Access, key: Presented, vouched: boolean, attempt: AuthAttempt, charged: void | KeyCharge): void | Promise<void> {
    const { keyId } = key.key;
  // Only a vouched key's charge was read before the row; a version read after it would be too late to tag it.
    const version = cache !== null && charged !== undefined ? charged.version : null;
    if (version !== null) {
      const cached = cache!.get(keyId, version);
      if (cached !== undefined) return admit(request, reply, access, key, vouched, attempt, cached, charged);
    }
    const askedAt = version === null ? 0 : Date.now();
    let found: Credential | null | Promise<Credential | null>;
    try {
      found = options.store.findCredential(keyId);
    } catch (error) {
      found = Promise.reject(error);
    }
    if (!(found instanceof Promise)) return admit(request, reply, access, key, vouched, attempt, found, charged);
    return found.then(
      (credential) => {
        if (version !== null && credential !== null) cache!.set(keyId, version, credential, askedAt);
        return admit(request, reply, access, key, vouched, attempt, credential, charged);
      },
      (error: unknown) => refused(request, key, vouched, attempt, error),
    );
  }

  function admit(request: FastifyRequest, reply: FastifyReply, access: Access, key: Presented, vouched: boolean, attempt: AuthAttempt, credential: Credential | null, charged: void | KeyCharge): void | Promise<void> {
    try {
      identified(request, reply, identify(key, credential));
    } catch (error) {
      refused(request, key, vouched, attempt, error);
    }
    return admitted(request, reply, access, key, vouched, attempt, charged);
  }

  function refused(request: FastifyRequest, key: Presented, vouched: boolean, attempt: AuthAttempt, error: unknown): never {
    if (error instanceof HttpError && error.statusCode === 401) {
      // A remembered key that fails now (revoked, deleted) is a stranger again: its next attempts spend the budget.
      if (vouched) verifiedKeys.forget(key.key.keyId);
      cache?.forget(key.key.keyId);
      // Revoked or expired is said only once the secret matched: still the holder's request, so its usage counts it as
      // refused (key-usage.ts). Any other 401 proves no key, and names none.
      request.keyId = error.code === 'key_revoked' || error.code === 'key_expired' ? key.key.keyId : null;
      reportFailure(request, error.code, key.credentials.username);
    } else {
      // The store could not answer (503): the attempt is given back, so retrying through an outage never locks a client out.
      rateBudgets.refundAuthAttempt(request, attempt);
    }
    throw error;
  }

  function identified(request: FastifyRequest, reply: FastifyReply, credential: Credential): void {
    request.caller = credential.account;
    request.credential = credential;
      // Before any later refusal (budget, Premium, scope), so a client hears of expiry on every answer its key gets.
    const { expiresAtMs } = credential;
    if (expiresAtMs !== null && expiresAtMs - Date.now() < EXPIRY_WARNING_MS) {
      reply.header(KEY_EXPIRES_HEADER, new Date(expiresAtMs).toISOString());
    }
    request.keyId = credential.keyId;
  }

  function admitted(request: FastifyRequest, reply: FastifyReply, access: Access, key: Presented, vouched: boolean, attempt: AuthAttempt, charged: void | KeyCharge): void | Promise<void> {
    // Recorded off the request path: a slow store must not hold the answer back for a "last used" stamp.
    if (vouched) {
      recordUse(request, charged);
      return checkAccess(request, access);
    }
    rateBudgets.refundAuthAttempt(request, attempt);
    verifiedKeys.remember(request.credential!.keyId, request.credential!.hash, key.owner);
    // Every authenticated request spends its key's budget, Premium or not.
    const charging = rateBudgets.chargeKey(request, reply, key.owner);
    if (charging instanceof Promise) {
      return charging.then((charge) => {
        recordUse(request, charge);
        checkAccess(request, access);
      });
    }
    recordUse(request, charging);
    return checkAccess(request, access);
  }

  return function authenticate(request, reply, access) {
    const header = request.headers.authorization;
    if (header === undefined) {
      if (access === 'public') return rateBudgets.charge(request, reply);
      reportFailure(request, 'credentials_required', undefined);
      throw unauthenticated('credentials_required', 'This endpoint needs HTTP Basic credentials: your username and an API key.');
    }
    // Node keeps the first of several Authorization headers; which one a proxy used is anyone's guess.
    if (repeatsHeader(request.raw.rawHeaders, 'authorization')) {
      throw new HttpError(400, 'duplicate_header', 'The request has more than one Authorization header; send exactly one.');
    }
    const credentials = parseBasicCredentials(header);
    let key: Presented;
    try {
      key = presented(credentials, header);
    } catch (error) {
      // Refused without a store read, but still a failed attempt (past the budget, the 429 answers).
      return then(rateBudgets.spendAuthAttempt(request, reply), () => {
        if (error instanceof HttpError) reportFailure(request, error.code, credentials?.username);
        throw error;
      });
    }
    // Spend a budget before any store read: a key seen right spends its per-key budget, any other the address's failed
    // attempts, so neither valid keys nor guesses can drive reads past a limit.
    if (verifiedKeys.vouchesFor(key.key.keyId, key.digest, key.owner)) {
      request.keyId = key.key.keyId;
      const charging = rateBudgets.chargeKey(request, reply, key.owner);
      if (!(charging instanceof Promise)) return lookUp(request, reply, access, key, true, null, charging);
      return charging.then((charge) => lookUp(request, reply, access, key, true, null, charge));
    }
    return then(rateBudgets.spendAuthAttempt(request, reply), (attempt) => lookUp(request, reply, access, key, false, attempt));
  };
}
