// A key's request budget in Redis, in the one round trip that also answers its account's credentials version and whether a
// last-use stamp is due somewhere in the deployment.
//
// One script, one slot: its three keys share the account's hash tag (accountTag), so it runs as well on a Redis Cluster.
// Guarded by: test/unit/http/limits/key-budget-script.test.ts.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { accountTag, credentialsVersionKey } from '../../store/credentials/credential-versions.ts';
import type { WindowCount } from './rate-counters.ts';

/** What one per-key charge answers beside its count. */
export interface KeyCharge extends WindowCount {
  /** The account's credentials version as it was before this request reads anything; null when no cache asks for it. */
  readonly version: string | null;
  /** This request is the first of its key, across every instance, since KEY_TOUCH_INTERVAL_MS: it records the use. */
  readonly touchDue: boolean;
}

// KEYS: the window, the account's credentials version, the key's last-use marker.
// ARGV: window ms; the budget (0: not counted); the touch interval ms (0: every request); the version's lifetime ms (0: not
// asked); this process's seed for a new version. A missing version (never announced, expired, a Redis that lost its data)
// is made anew from the seed and Redis's clock: never one an entry was tagged with before. The marker is set only within
// the budget, so that refused requests cannot use up the minute's stamp.
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
  /** REDIS_KEY_PREFIX. */
  readonly prefix: string;
  readonly touchIntervalMs: number;
  /** How long a version made here lives (versionLifetimeMs); 0 when this process caches no credentials and never asks. */
  readonly versionLifetimeMs: number;
}

/** The three keys of one charge, by the account's hash tag; exported for the test that proves they share one slot. */
export function keyChargeKeys(prefix: string, owner: string, keyId: string): [window: string, version: string, marker: string] {
  const tag = accountTag(owner);
  return [`${prefix}rate:key:${tag}:${keyId}`, credentialsVersionKey(prefix, owner), `${prefix}used:${tag}:${keyId}`];
}

export class RedisKeyBudget {
  readonly #redis: Redis & KeyChargeCommand;
  readonly #options: KeyBudgetOptions;
  readonly #seed = randomBytes(9).toString('base64url');

  constructor(redis: Redis, options: KeyBudgetOptions) {
    if (!('keyCharge' in redis)) redis.defineCommand('keyCharge', { numberOfKeys: 3, lua: KEY_CHARGE_SCRIPT });
    this.#redis = redis as Redis & KeyChargeCommand;
    this.#options = options;
  }

  /** `owner`: the username in lower case; `max`: the budget, 0 when it is off (then nothing is counted). */
  async hit(owner: string, keyId: string, max: number): Promise<KeyCharge> {
    const { windowMs, prefix, touchIntervalMs, versionLifetimeMs } = this.#options;
    const [window, version, marker] = keyChargeKeys(prefix, owner, keyId);
    const [current, ttl, token, due] = await this.#redis.keyCharge(window, version, marker, windowMs, max, touchIntervalMs, versionLifetimeMs, this.#seed);
    return { current, resetMs: ttl, window: Date.now() + ttl, version: token === '' ? null : token, touchDue: due === 1 };
  }

  /** Whether a charge is worth its round trip when the budget is off: only for the version or the marker. */
  get answersMoreThanCount(): boolean {
    return this.#options.versionLifetimeMs > 0;
  }
}
