// Key operations, the one implementation the CLI and the admin API share: issue, roll, revoke, list.
import { issueKey, KEY_ID_PATTERN, type KeyEnvironment } from '../domain/api-keys.ts';
import { DomainError } from '../domain/errors.ts';
import type { ApiKeyRecord, AuditActor, KeyScope, KeyStore } from '../store/store.ts';
import { MAX_ACTIVE_KEYS } from '../store/store.ts';
import { checkExpiry, MAX_LIFETIME_MS, parseDuration, parseExpiry } from './expiry.ts';

export { MAX_ACTIVE_KEYS };
export const KEY_SCOPES: readonly KeyScope[] = ['read', 'write'];
export const LABEL_MAX_LENGTH = 100;
/** How long a rolled key keeps working beside its successor when the caller does not say. */
export const DEFAULT_OVERLAP = '24h';

export interface CreateKeyInput {
  readonly username: string;
  /** Which kind of key: the store's environment. */
  readonly environment: KeyEnvironment;
  readonly label?: string | null;
  /** Default: write. */
  readonly scope?: string;
  /** A duration such as 90d, 12h or 30m; not with expiresAt. */
  readonly expiresIn?: string;
  /** An ISO 8601 instant; not with expiresIn. */
  readonly expiresAt?: string;
  /** The clock, for tests. */
  readonly now?: number;
}

/** A key as issued: the record, and the key itself, which is shown this once and never stored. */
export interface IssuedApiKey {
  readonly key: ApiKeyRecord;
  readonly token: string;
}

export function checkScope(scope: string | undefined): KeyScope {
  if (scope === undefined) return 'write';
  if ((KEY_SCOPES as readonly string[]).includes(scope)) return scope as KeyScope;
  throw new DomainError('invalid', 'invalid_scope', `'${scope}' is not a scope: a key's scope is 'read' (GET only) or 'write' (every endpoint).`, {
    field: 'scope',
  });
}

export function checkLabel(label: string | null | undefined): string | null {
  if (label === undefined || label === null) return null;
  if (label.length > LABEL_MAX_LENGTH || /\p{Cc}/u.test(label)) {
    throw new DomainError('invalid', 'invalid_label', `A label is at most ${LABEL_MAX_LENGTH} characters, without control characters.`, { field: 'label' });
  }
  return label;
}

export function checkKeyId(keyId: string): string {
  if (!KEY_ID_PATTERN.test(keyId)) {
    throw new DomainError('invalid', 'invalid_key_id', `'${keyId}' is not a key id: a key id is the 12 characters after the prefix, as 'keys list' shows.`, {
      field: 'key_id',
    });
  }
  return keyId;
}

function expiryOf(input: CreateKeyInput, now: number): Date | null {
  if (input.expiresIn !== undefined && input.expiresAt !== undefined) {
    throw new DomainError('invalid', 'invalid_expiry', 'Give the expiry once: either a duration (expires in) or an instant (expires at), not both.', {
      field: 'expires_at',
    });
  }
  if (input.expiresIn !== undefined) return checkExpiry(new Date(now + parseDuration(input.expiresIn, 'expires_in')), now, 'expires_in');
  if (input.expiresAt !== undefined) return parseExpiry(input.expiresAt, now);
  return null;
}

/** Every rule is checked before the store is touched: bad input changes nothing. */
export async function createKey(store: KeyStore, actor: AuditActor, input: CreateKeyInput): Promise<IssuedApiKey> {
  const label = checkLabel(input.label);
  const scope = checkScope(input.scope);
  const expiresAt = expiryOf(input, input.now ?? Date.now());
  const issued = issueKey(input.environment);
  const key = await store.createKey(
    input.username,
    { keyId: issued.keyId, hash: issued.hash, displayPrefix: issued.displayPrefix, label, scope, expiresAt },
    actor,
  );
  return { key, token: issued.token };
}

export interface RollKeyInput {
  readonly keyId: string;
  readonly environment: KeyEnvironment;
  /** How long the old key keeps working: a duration (24h) or '0' (it stops at once). Default: 24h. */
  readonly overlap?: string;
  readonly now?: number;
}

export interface RolledApiKey {
  /** The old key, now set to expire when the overlap ends. */
  readonly old: ApiKeyRecord;
  readonly successor: ApiKeyRecord;
  /** The successor itself, shown this once. */
  readonly token: string;
}

/**
 * The successor keeps the old key's owner, label, scope and lifetime. A key is rolled once: one rolled already is refused
 * (key_already_rolled, naming its successor), and so is a revoked or expired key (key_inactive).
 */
export async function rollKey(store: KeyStore, actor: AuditActor, input: RollKeyInput): Promise<RolledApiKey> {
  checkKeyId(input.keyId);
  const overlapMs = parseDuration(input.overlap ?? DEFAULT_OVERLAP, 'overlap', { zero: true });
  if (overlapMs > MAX_LIFETIME_MS) throw new DomainError('invalid', 'invalid_duration', 'An overlap is at most 10 years.', { field: 'overlap' });
  const issued = issueKey(input.environment);
  const rolled = await store.rollKey(
    input.keyId,
    { keyId: issued.keyId, hash: issued.hash, displayPrefix: issued.displayPrefix, label: null },
    new Date((input.now ?? Date.now()) + overlapMs),
    actor,
  );
  return { ...rolled, token: issued.token };
}

export async function revokeKey(store: KeyStore, actor: AuditActor, input: { readonly keyId: string }): Promise<ApiKeyRecord> {
  return store.revokeKey(checkKeyId(input.keyId), actor);
}

export async function listKeys(store: KeyStore, input: { readonly username: string }): Promise<ApiKeyRecord[]> {
  return store.listKeys(input.username);
}
