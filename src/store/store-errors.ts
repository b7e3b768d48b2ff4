// The failures every store (and the CLI, reading through one) reports in the same words, whatever the engine.
import { DomainError } from '../domain/errors.ts';
import type { ApiKeyRecord } from './store.ts';

export function accountNotFound(username: string): DomainError {
  return new DomainError('not_found', 'account_not_found', `No account is named '${username}'.`, { field: 'username' });
}

/** An update of an account that another caller deleted in the meantime. */
export function accountGone(): DomainError {
  return new DomainError('not_found', 'account_not_found', 'The account was deleted while the request ran.');
}

export function usernameTaken(username: string): DomainError {
  return new DomainError('conflict', 'username_taken', `An account named '${username}' already exists (names ignore case).`, {
    field: 'username',
  });
}

export function keyExists(keyId: string): DomainError {
  return new DomainError('conflict', 'key_exists', `A key with id '${keyId}' already exists.`);
}

export function keyNotFound(keyId: string): DomainError {
  return new DomainError('not_found', 'key_not_found', `No API key has the id '${keyId}'.`, { field: 'key_id' });
}

export function adminTokenNotFound(tokenId: string): DomainError {
  return new DomainError('not_found', 'admin_token_not_found', `No admin token has the id '${tokenId}'.`, { field: 'token_id' });
}

export function adminTokenExists(tokenId: string): DomainError {
  return new DomainError('conflict', 'admin_token_exists', `An admin token with id '${tokenId}' already exists.`);
}

/** Asked of a store whose engine has not answered since the server started; it keeps trying in the background (ConnectingStore). */
export function storeNotConnected(): DomainError {
  return new DomainError('unavailable', 'store_unavailable', 'The database is not reachable yet; try again shortly.');
}

/** An If-Match that no longer names the account as it is: the update was not made. */
export function preconditionFailed(): DomainError {
  return new DomainError(
    'precondition',
    'precondition_failed',
    'The account has changed since the version named in If-Match (or If-Match names none): nothing was written; read it again.',
  );
}

/** Another request holds this idempotency key (or took it over while this one ran): nothing was written. */
export function idempotencyKeyInUse(): DomainError {
  return new DomainError(
    'conflict',
    'idempotency_key_in_use',
    'Another request with this Idempotency-Key is still running; retry after it has been answered.',
    { field: 'Idempotency-Key' },
  );
}

/** A key that can no longer be rolled: revoked, or already expired. */
export function keyInactive(keyId: string, why: string): DomainError {
  return new DomainError('conflict', 'key_inactive', `Key '${keyId}' ${why}; only a key still in use can be rolled.`, { field: 'key_id' });
}

/**
 * A key rolled once already: a key has one successor, so every later roll (and every roll that lost a race) is refused,
 * naming the successor. Also when that successor has since been revoked or has expired: a key on its way out never issues
 * a second credential; a new one is made with `keys create`. `successor` is its row as it is now (null if it is gone).
 */
export function keyAlreadyRolled(keyId: string, successorId: string, successor: ApiKeyRecord | null, now = new Date()): DomainError {
  let next = `roll '${successorId}' to replace it in turn`;
  if (successor?.revokedAt != null) next = `'${successorId}' was revoked at ${successor.revokedAt}; create a new key instead`;
  else if (successor?.expiresAt != null && Date.parse(successor.expiresAt) <= now.getTime()) {
    next = `'${successorId}' expired at ${successor.expiresAt}; create a new key instead`;
  }
  return new DomainError('conflict', 'key_already_rolled', `Key '${keyId}' was already rolled into '${successorId}', and a key is rolled only once: ${next}.`, {
    field: 'key_id',
  });
}

export function tooManyKeys(username: string, max: number): DomainError {
  return new DomainError(
    'conflict',
    'too_many_keys',
    `'${username}' already has ${max} keys that are neither expired nor revoked, the most an account may have; revoke one first.`,
    { field: 'username' },
  );
}
