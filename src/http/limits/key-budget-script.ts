// A key's request budget in Redis, in the round trip that also answers the credentials version and whether a stamp is due.
// Its keys share the account's hash tag, so it runs on a Redis Cluster. Guarded by: test/unit/http/limits/key-budget-script.test.ts.
import { randomBytes } from 'node:crypto';
import type { RedisClient } from '../../store/redis-client.ts';
import { accountTag, credentialsVersionKey } from '../../store/credentials/credential-versions.ts';
import type { WindowCount } from './rate-counters.ts';

export interface KeyCharge extends WindowCount {
  /** As before this request reads anything; null when no cache asks. */
  readonly version: string | null;
  /** First use of the key across the deployment since KEY_TOUCH_INTERVAL_MS: it records the use. */
  readonly touchDue: boolean;
}

// KEYS: window, credentials version, last-use marker. ARGV: window ms; budget (0: not counted); touch interval ms; version
// lifetime ms (0: not asked); seed. A missing version is made anew from the seed and Redis's clock, never a former one. The
// marker is set only within the budget, so refused requests cannot use up the stamp.
export const KEY_CHARGE_SCRIPT = `
local window = tonumber(ARGV[1])
local max = tonumber(ARGV[2])
local current, ttl = 0, window
if max > 0 then
  current = redis.call('INCR', KEYS[1])
  if current == 1 then
    redis.call('PEXPIRE', KEYS[1], window)
  else
    ttl = redis.call('PTTL', KEYS[1])
    if ttl < 0 then
      redis.call('PEXPIRE', KEYS[1], window)
      ttl = window
    end
  end
end
local version = ''
if ARGV[4] ~= '0' then
  version = redis.call('GET', KEYS[2])
  if not version then
    local now = redis.call('TIME')
    version = ARGV[5] .. ':' .. now[1] .. '.' .. now[2]
    redis.call('SET', KEYS[2], version, 'PX', ARGV[4])
  end
end
local due = 0
if max == 0 or current <= max then
  if ARGV[3] == '0' or redis.call('SET', KEYS[3], '1', 'NX', 'PX', ARGV[3]) then due = 1 end
end
return {current, ttl, version, due}
`;

interface KeyChargeCommand {
  keyCharge(window: string, version: string, marker: string, ...argv: (string | number)[]): Promise<[number, number, string, number]>;
}

export interface KeyBudgetOptions {
  readonly windowMs: number;
  readonly prefix: string;
  readonly touchIntervalMs: number;
  /** 0 when this process caches no credentials. */
  readonly versionLifetimeMs: number;
}

/** Exported for the test that proves they share one slot. */
export function keyChargeKeys(prefix: string, owner: string, keyId: string): [window: string, version: string, marker: string] {
  const tag = accountTag(owner);
  return [`${prefix}rate:key:${tag}:${keyId}`, credentialsVersionKey(prefix, owner), `${prefix}used:${tag}:${keyId}`];
}

export class RedisKeyBudget {
  readonly #redis: RedisClient & KeyChargeCommand;
  readonly #options: KeyBudgetOptions;
  readonly #seed = randomBytes(9).toString('base64url');

  constructor(redis: RedisClient, options: KeyBudgetOptions) {
    if (!('keyCharge' in redis)) redis.defineCommand('keyCharge', { numberOfKeys: 3, lua: KEY_CHARGE_SCRIPT });
    this.#redis = redis as RedisClient & KeyChargeCommand;
    this.#options = options;
  }

  /** `owner`: lower-case username; `max` 0: nothing is counted. */
  async hit(owner: string, keyId: string, max: number): Promise<KeyCharge> {
    const { windowMs, prefix, touchIntervalMs, versionLifetimeMs } = this.#options;
    const [window, version, marker] = keyChargeKeys(prefix, owner, keyId);
    const [current, ttl, token, due] = await this.#redis.keyCharge(window, version, marker, windowMs, max, touchIntervalMs, versionLifetimeMs, this.#seed);
    return { current, resetMs: ttl, window: Date.now() + ttl, version: token === '' ? null : token, touchDue: due === 1 };
  }

  /** With the budget off, a round trip is worth it only for the version or the marker. */
  get answersMoreThanCount(): boolean {
    return this.#options.versionLifetimeMs > 0;
  }
}
