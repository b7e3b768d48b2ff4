// The credentials version of an account in Redis: a random token that every change to what a key check answers replaces.
//
// Instances that cache credentials (PostgreSQL + Redis, src/http/auth/versioned-credentials.ts) tag each entry with the token
// read before the row, and trust it only while the token is unchanged. Random tokens, never a counter: a Redis that lost
// its data, or a key that expired, can never bring an old token back, so either costs a reload and nothing else.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Config } from '../../config.ts';

/**
 * Every Redis key of one account's credentials shares this hash tag, so one script may touch them all on a Redis Cluster.
 * `owner`: the username in lower case (usernames are letters, digits, '.', '_' and '-': no brace can end the tag early).
 */
export function accountTag(owner: string): string {
  return `{u:${owner}}`;
}

export function credentialsVersionKey(prefix: string, owner: string): string {
  return `${prefix}cred:${accountTag(owner)}`;
}

/** How long a version lives unchanged: twice the cache's max age, so an entry it tagged has aged out before it can go. */
export function versionLifetimeMs(cacheMaxAgeMs: number): number {
  // A process that caches nothing (max age 0) still announces for those that do: a minute, the default's twice.
  return 2 * (cacheMaxAgeMs > 0 ? cacheMaxAgeMs : 30_000);
}

/** Told after a change that can alter what a key check answers has committed, before the change is acknowledged. */
export interface CredentialAnnouncer {
  /** `username` in any case. Rejects when the notice could not be given: the caller must not acknowledge silently. */
  credentialsChanged(username: string): Promise<void>;
}

/** With no Redis nobody caches across processes: nothing to tell. */
export const silentAnnouncer: CredentialAnnouncer = { credentialsChanged: async () => {} };

export class RedisCredentialAnnouncer implements CredentialAnnouncer {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #lifetimeMs: number;

  constructor(redis: Redis, prefix: string, cacheMaxAgeMs: number) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#lifetimeMs = versionLifetimeMs(cacheMaxAgeMs);
  }

  async credentialsChanged(username: string): Promise<void> {
    const token = randomBytes(12).toString('base64url');
    await this.#redis.set(credentialsVersionKey(this.#prefix, username.toLowerCase()), token, 'PX', this.#lifetimeMs);
  }
}

/** The announcer of a process with Redis: REDIS_KEY_PREFIX names the keys, as the instances' budget scripts do. */
export function announcerOver(redis: Redis, config: Pick<Config, 'redis' | 'credentialCacheMaxAgeMs'>): CredentialAnnouncer {
  return new RedisCredentialAnnouncer(redis, config.redis?.keyPrefix ?? '', config.credentialCacheMaxAgeMs);
}
