// The credentials version of an account in Redis: a random token that every change to what a key check answers replaces.
//
// Caching instances (versioned-credentials.ts) trust an entry only while the token read before its row is unchanged. Random,
// never a counter: a Redis that lost its data or an expired key can never bring an old token back.
import { randomBytes } from 'node:crypto';
import type { RedisClient } from '../redis-client.ts';
import type { Config } from '../../config.ts';

/** Shared by every Redis key of one account, so one script may touch them all on a Cluster (usernames hold no brace). */
export function accountTag(owner: string): string {
  return `{u:${owner}}`;
}

export function credentialsVersionKey(prefix: string, owner: string): string {
  return `${prefix}cred:${accountTag(owner)}`;
}

/** Twice the cache's max age, so an entry it tagged has aged out before it can go. */
export function versionLifetimeMs(cacheMaxAgeMs: number): number {
  // A process that caches nothing still announces for those that do.
  return 2 * (cacheMaxAgeMs > 0 ? cacheMaxAgeMs : 30_000);
}

/** After the change commits, before it is acknowledged. */
export interface CredentialAnnouncer {
  /** Rejects when the notice could not be given: the caller must not acknowledge silently. */
  credentialsChanged(username: string): Promise<void>;
}

/** Without Redis nobody caches across processes. */
export const silentAnnouncer: CredentialAnnouncer = { credentialsChanged: async () => {} };

export class RedisCredentialAnnouncer implements CredentialAnnouncer {
  readonly #redis: RedisClient;
  readonly #prefix: string;
  readonly #lifetimeMs: number;

  constructor(redis: RedisClient, prefix: string, cacheMaxAgeMs: number) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#lifetimeMs = versionLifetimeMs(cacheMaxAgeMs);
  }

  async credentialsChanged(username: string): Promise<void> {
    const token = randomBytes(12).toString('base64url');
    await this.#redis.set(credentialsVersionKey(this.#prefix, username.toLowerCase()), token, 'PX', this.#lifetimeMs);
  }
}

/** REDIS_KEY_PREFIX names the keys, as the budget scripts do. */
export function announcerOver(redis: RedisClient, config: Pick<Config, 'redis' | 'credentialCacheMaxAgeMs'>): CredentialAnnouncer {
  return new RedisCredentialAnnouncer(redis, config.redis?.keyPrefix ?? '', config.credentialCacheMaxAgeMs);
}
