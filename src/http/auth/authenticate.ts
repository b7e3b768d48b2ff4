// Authenticates callers from Basic credentials (username + API key) and enforces each route's `access`.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { digestMatches, hashKey, keyDigest, type KeyEnvironment, type ParsedKey } from '../../domain/api-keys.ts';
import { EXPIRY_WARNING_MS } from '../../operations/expiry.ts';
import type { Account, Credential, CredentialStore } from '../../store/store.ts';
import { parseBasicCredentials } from './basic-credentials.ts';
import { HttpError } from '../failures/http-error.ts';
import type { AuthAttempt, KeyCharge, RateBudgets } from '../limits/rate-limits.ts';
import { loggableUsername } from '../observability/key-redaction.ts';
import { keyUseRecorder, type RecordUse } from './key-use.ts';
import { VerifiedKeys } from './verified-keys.ts';
import { VersionedCredentials } from './versioned-credentials.ts';
import { wellFormedKey, type Unauthenticated } from './well-formed-key.ts';

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

/**
 * One request's authentication, handed from step to step in place of a row of values: what the caller presented, and what
 * the budgets answered. Made once the key is well formed, one plain object per request; the steps fill in the rest.
 */
interface Attempt {
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
  readonly access: Access;
  /** The username as sent (the failure log names it, redacted). */
  readonly username: string;
  /** The username lowercased: whose key it must be, and whose budget it spends. */
  readonly owner: string;
  readonly key: ParsedKey;
  /** The key's digest, hashed once and compared with the row's. */
  readonly digest: string;
  /** Seen right before (VerifiedKeys): the key's own budget is charged before the read, not the address's failed attempts. */
  readonly vouched: boolean;
  /** The failed attempt spent before the read (null for a vouched key): given back once the key proves right, or the store fails. */
  spentFailure: AuthAttempt;
  /** What the key's charge answered; a Redis charge carries the credentials version to tag a cached row with, and whether a stamp is due. */
  charge: void | KeyCharge;
}

/** Runs `next` at once when `value` is not a promise, so the common request never waits a microtask. */
function then<T>(value: T | Promise<T>, next: (value: T) => void | Promise<void>): void | Promise<void> {
  return value instanceof Promise ? value.then(next) : next(value);
}

/**
 * The checks in the order a request meets them: the key's shape, a budget spent before any read, the credential (cached or
 * read), the verdict on it, then the key's budget and the route's access. Each step takes the request's Attempt.
 */
class KeyAuthenticator {
  readonly #rateBudgets: RateBudgets;
  readonly #store: CredentialStore;
  readonly #environment: KeyEnvironment;
  /** The 401 with this port's challenge. */
  readonly #unauthenticated: Unauthenticated;
  readonly #onFailure: ((reason: string) => void) | undefined;
  readonly #decoyHash: Uint8Array;
  readonly #recordUse: RecordUse;
  readonly #verifiedKeys: VerifiedKeys;
  readonly #cache: VersionedCredentials | null;

  constructor(rateBudgets: RateBudgets, options: AuthenticateOptions) {
    this.#rateBudgets = rateBudgets;
    this.#store = options.store;
    this.#environment = options.environment;
    const challenge = { 'WWW-Authenticate': `Basic realm="${options.realm}", charset="UTF-8"` };
    this.#unauthenticated = (code, message) => new HttpError(401, code, message, { headers: challenge });
    this.#onFailure = options.onFailure;
    this.#decoyHash = options.decoyHash ?? DECOY_HASH;
    this.#recordUse = keyUseRecorder(options.store, options.touchIntervalMs);
    // Only keys seen right are served from the cache: remember at least as many as it may hold.
    this.#verifiedKeys = new VerifiedKeys(Math.max(10_000, options.credentialCache?.maxEntries ?? 0));
    const cache = options.credentialCache == null || options.credentialCache.maxAgeMs === 0 ? null : new VersionedCredentials(options.credentialCache);
    if (cache !== null) options.credentialCache?.resetOnReconnect?.(() => cache.clear());
    this.#cache = cache;
  }

  authenticate(request: FastifyRequest, reply: FastifyReply, access: Access): void | Promise<void> {
    const header = request.headers.authorization;
    if (header === undefined) {
      if (access === 'public') return this.#rateBudgets.charge(request, reply);
      this.#reportFailure(request, 'credentials_required', undefined);
      throw this.#unauthenticated('credentials_required', 'This endpoint needs HTTP Basic credentials: your username and an API key.');
    }
    // Node keeps the first of several Authorization headers; which one a proxy used is anyone's guess.
    if (repeatsHeader(request.raw.rawHeaders, 'authorization')) {
      throw new HttpError(400, 'duplicate_header', 'The request has more than one Authorization header; send exactly one.');
    }
    const credentials = parseBasicCredentials(header);
    let key: ParsedKey;
    try {
      key = wellFormedKey(credentials, header, this.#environment, this.#unauthenticated);
    } catch (error) {
      // Refused without a store read, but still a failed attempt (past the budget, the 429 answers).
      return then(this.#rateBudgets.spendAuthAttempt(request, reply), () => {
        if (error instanceof HttpError) this.#reportFailure(request, error.code, credentials?.username);
        throw error;
      });
    }
    const { username } = credentials!; // wellFormedKey refuses a header without credentials
    const owner = username.toLowerCase();
    const digest = keyDigest(key.token);
    const vouched = this.#verifiedKeys.vouchesFor(key.keyId, digest, owner);
    const attempt: Attempt = { request, reply, access, username, owner, key, digest, vouched, spentFailure: null, charge: undefined };
    // Spend a budget before any store read: a key seen right spends its per-key budget, any other the address's failed
    // attempts, so neither valid keys nor guesses can drive reads past a limit.
    if (vouched) {
      request.keyId = key.keyId;
      const charging = this.#rateBudgets.chargeKey(request, reply, owner);
      if (!(charging instanceof Promise)) {
        attempt.charge = charging;
        return this.#lookUp(attempt);
      }
      return charging.then((charge) => {
        attempt.charge = charge;
        return this.#lookUp(attempt);
      });
    }
    const spending = this.#rateBudgets.spendAuthAttempt(request, reply);
    if (!(spending instanceof Promise)) {
      attempt.spentFailure = spending;
      return this.#lookUp(attempt);
    }
    return spending.then((spent) => {
      attempt.spentFailure = spent;
      return this.#lookUp(attempt);
    });
  }

  /** Asks the cache (with the version the vouched key's charge read first) or the store, then admits or refuses. */
  #lookUp(attempt: Attempt): void | Promise<void> {
    const { keyId } = attempt.key;
    const cache = this.#cache;
    // Only a vouched key's charge was read before the row; a version read after it would be too late to tag it.
    const version = cache !== null && attempt.charge !== undefined ? attempt.charge.version : null;
    if (version !== null) {
      const cached = cache!.get(keyId, version);
      if (cached !== undefined) return this.#admit(attempt, cached);
    }
    const askedAt = version === null ? 0 : Date.now();
    let found: Credential | null | Promise<Credential | null>;
    try {
      found = this.#store.findCredential(keyId);
    } catch (error) {
      found = Promise.reject(error);
    }
    if (!(found instanceof Promise)) return this.#admit(attempt, found);
    return found.then(
      (credential) => {
        if (version !== null && credential !== null) cache!.set(keyId, version, credential, askedAt);
        return this.#admit(attempt, credential);
      },
      (error: unknown) => this.#refuse(attempt, error),
    );
  }

  /** Judges the credential found (null: no such key) and, when it is the caller's and valid, lets the request on. */
  #admit(attempt: Attempt, found: Credential | null): void | Promise<void> {
    try {
      this.#identified(attempt, this.#judge(attempt, found));
    } catch (error) {
      this.#refuse(attempt, error);
    }
    return this.#admitted(attempt);
  }

  /** The credential, if the presented key is it and it may still be used; else the 401 that says why not. */
  #judge(attempt: Attempt, found: Credential | null): Credential {
    const hashMatches = digestMatches(attempt.digest, found?.hash ?? this.#decoyHash);
    const ownerMatches = found !== null && found.account.username.toLowerCase() === attempt.owner;
    if (found === null || !hashMatches || !ownerMatches) {
      throw this.#unauthenticated('invalid_credentials', 'The username or API key is wrong.');
    }
    if (found.revoked) {
      throw this.#unauthenticated('key_revoked', 'This API key has been revoked; ask the account holder for a new one.');
    }
    // The row's expiry against the clock, at every request: a cached row never carries a stale verdict.
    if (found.expiresAtMs !== null && found.expiresAtMs <= Date.now()) {
      const at = new Date(found.expiresAtMs).toISOString();
      throw this.#unauthenticated('key_expired', `This API key expired at ${at}; use its successor, or ask the account holder for a new one.`);
    }
    return found;
  }

  /** Undoes what the attempt left behind for a key that is not right, or gives the attempt back when the store failed; rethrows. */
  #refuse(attempt: Attempt, error: unknown): never {
    const { request, key } = attempt;
    if (error instanceof HttpError && error.statusCode === 401) {
      // A remembered key that fails now (revoked, deleted) is a stranger again: its next attempts spend the budget.
      if (attempt.vouched) this.#verifiedKeys.forget(key.keyId);
      this.#cache?.forget(key.keyId);
      // Revoked or expired is said only once the secret matched: still the holder's request, so its usage counts it as
      // refused (key-usage.ts). Any other 401 proves no key, and names none.
      request.keyId = error.code === 'key_revoked' || error.code === 'key_expired' ? key.keyId : null;
      this.#reportFailure(request, error.code, attempt.username);
    } else {
      // The store could not answer (503): the attempt is given back, so retrying through an outage never locks a client out.
      this.#rateBudgets.refundAuthAttempt(request, attempt.spentFailure);
    }
    throw error;
  }

  /** Puts the caller and its credential on the request, and says on the answer when the key expires soon. */
  #identified(attempt: Attempt, credential: Credential): void {
    const { request } = attempt;
    request.caller = credential.account;
    request.credential = credential;
    // Before any later refusal (budget, Premium, scope), so a client hears of expiry on every answer its key gets.
    const { expiresAtMs } = credential;
    if (expiresAtMs !== null && expiresAtMs - Date.now() < EXPIRY_WARNING_MS) {
      attempt.reply.header(KEY_EXPIRES_HEADER, new Date(expiresAtMs).toISOString());
    }
    request.keyId = credential.keyId;
  }

  /** Charges a key not vouched for yet (a vouched one was charged before the read), records its use, checks the route's access. */
  #admitted(attempt: Attempt): void | Promise<void> {
    const { request, reply, access } = attempt;
    // Recorded off the request path: a slow store must not hold the answer back for a "last used" stamp.
    if (attempt.vouched) {
      this.#recordUse(request, attempt.charge);
      return checkAccess(request, access);
    }
    this.#rateBudgets.refundAuthAttempt(request, attempt.spentFailure);
    this.#verifiedKeys.remember(request.credential!.keyId, request.credential!.hash, attempt.owner);
    // Every authenticated request spends its key's budget, Premium or not.
    const charging = this.#rateBudgets.chargeKey(request, reply, attempt.owner);
    if (charging instanceof Promise) {
      return charging.then((charge) => {
        this.#recordUse(request, charge);
        checkAccess(request, access);
      });
    }
    this.#recordUse(request, charging);
    return checkAccess(request, access);
  }

  // Usernames are not secret and help spot a guesser; the key never appears, even when pasted into the user part.
  #reportFailure(request: FastifyRequest, reason: string, username: string | undefined): void {
    request.log.info(username === undefined ? { reason } : { reason, username: loggableUsername(username) }, 'auth failure');
    this.#onFailure?.(reason);
  }
}

/** The pipeline's authentication step (src/http/pipeline.ts). */
export function authenticator(rateBudgets: RateBudgets, options: AuthenticateOptions): Authenticate {
  const keys = new KeyAuthenticator(rateBudgets, options);
  return (request, reply, access) => keys.authenticate(request, reply, access);
}
