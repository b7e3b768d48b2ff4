// A store whose changes to what a key check answers are announced (credential-versions.ts) once committed, before they return.
//
// Wrapping the store where the ports and the CLI are built covers every face at once; authentication gets the engine itself,
// so its reads never pay this wrapper's frame.
import type { Config } from '../../config.ts';
import type { KeyEnvironment } from '../../domain/api-keys.ts';
import { DomainError } from '../../domain/errors.ts';
import { defineForwarders, type StoreMethod } from '../store-methods.ts';
import type { Account, AccountUpdateOptions, ApiKeyRecord, AuditActor, NewApiKey, RolledKey, Store } from '../store.ts';
import type { CredentialAnnouncer } from './credential-versions.ts';

type Method = (...args: never[]) => unknown;

// Every other method is an own property made in the constructor.
export interface AnnouncingStore extends Store {}

export class AnnouncingStore {
  readonly engine: string;
  readonly environment: KeyEnvironment;
  readonly #store: Store;
  readonly #announcer: CredentialAnnouncer;

  constructor(store: Store, announcer: CredentialAnnouncer) {
    this.engine = store.engine;
    this.environment = store.environment;
    this.#store = store;
    this.#announcer = announcer;
    // Looked up per call: a ConnectingStore replaces its methods when the database first answers.
    defineForwarders(this, store, (method: StoreMethod) => (...args: never[]) => (store[method] as Method)(...args));
  }

  async #announced<T>(change: Promise<T>, username: (result: T) => string): Promise<T> {
    const result = await change;
    await announce(this.#announcer, username(result));
    return result;
  }

  revokeKey(keyId: string, audit?: AuditActor): Promise<ApiKeyRecord> {
    return this.#announced(this.#store.revokeKey(keyId, audit), (key) => key.username);
  }

  /** The old key's expiry changes: its cached copy must be read again. */
  rollKey(keyId: string, successor: NewApiKey, oldExpiresAt: Date, audit?: AuditActor): Promise<RolledKey> {
    return this.#announced(this.#store.rollKey(keyId, successor, oldExpiresAt, audit), (rolled) => rolled.old.username);
  }

  /**
   * Announced under the account's own name as stored: the engine matches the name given without case by its own rules
   * (PostgreSQL's lower() maps 'İ' to 'i', JavaScript's does not), so the name as typed may not be the account's.
   */
  async deleteAccount(username: string, audit?: AuditActor): Promise<void> {
    const found = await this.#store.findAccount(username);
    return this.#announced(this.#store.deleteAccount(username, audit), () => found?.username ?? username);
  }

  setPremium(username: string, premium: boolean, audit?: AuditActor): Promise<Account> {
    return this.#announced(this.#store.setPremium(username, premium, audit), (account) => account.username);
  }

  updatePremium(accountId: number, premium: boolean, audit?: AuditActor): Promise<Account> {
    return this.#announced(this.#store.updatePremium(accountId, premium, audit), (account) => account.username);
  }

  // A cached credential carries its account, which GET /user answers.
  updateName(accountId: number, name: string, audit?: AuditActor, options?: AccountUpdateOptions): Promise<Account> {
    return this.#announced(this.#store.updateName(accountId, name, audit, options), (account) => account.username);
  }

  updateTimezone(accountId: number, timezone: string, audit?: AuditActor, options?: AccountUpdateOptions): Promise<Account> {
    return this.#announced(this.#store.updateTimezone(accountId, timezone, audit, options), (account) => account.username);
  }
}

/** Rejects with 503 credentials_not_announced, which the caller hears: repeating the change announces again. */
async function announce(announcer: CredentialAnnouncer, username: string): Promise<void> {
  try {
    await announcer.credentialsChanged(username);
  } catch (error) {
    throw new DomainError(
      'unavailable',
      'credentials_not_announced',
      'The change was saved, but the other instances could not be told of it (Redis is unavailable): until they are, they may ' +
        'answer with the old credentials for up to CREDENTIAL_CACHE_MAX_AGE_MS. Make the change again once Redis answers; if it is ' +
        'refused as already made (a roll, a deletion), wait CREDENTIAL_CACHE_MAX_AGE_MS instead.',
      { cause: error },
    );
  }
}

/** Announcing on PostgreSQL (where Redis-backed instances cache by version); null on SQLite, whose cache sees every commit. */
function announcing(announcer: CredentialAnnouncer | null, config: Pick<Config, 'database'>): CredentialAnnouncer | null {
  return announcer === null || config.database.engine !== 'postgres' ? null : announcer;
}

/** Announcing on PostgreSQL (where Redis-backed instances cache by version); `store` itself on SQLite, whose cache sees every commit. */
export function storeAnnouncingTo(store: Store, announcer: CredentialAnnouncer | null, config: Pick<Config, 'database'>): Store {
  const to = announcing(announcer, config);
  return to === null ? store : new AnnouncingStore(store, to);
}

/**
 * What a replayed write that changed an account's credentials announces again, under the same rule as storeAnnouncingTo:
 * its first announcement may never have been made (the reply lost after the commit, Redis down at the time). Null where
 * nothing is announced.
 */
export function announcingAgain(announcer: CredentialAnnouncer | null, config: Pick<Config, 'database'>): ((username: string) => Promise<void>) | null {
  const to = announcing(announcer, config);
  return to === null ? null : (username) => announce(to, username);
}
