// The per-key budget script: its keys share one Redis Cluster slot, and in one call it counts, answers the account's
// credentials version (made anew when missing, changed only by an announcement) and whether a last-use stamp is due.
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { KEY_CHARGE_SCRIPT, keyChargeKeys, RedisKeyBudget } from '../../../../src/http/limits/key-budget-script.ts';
import { RedisCredentialAnnouncer } from '../../../../src/store/credentials/credential-versions.ts';
import { redisSkipReason, TEST_REDIS_URL, uniqueKeyPrefix } from '../../../support/redis.ts';
import { requiring } from '../../../support/requiring.ts';
import { describe as plainDescribe, test as plainTest } from 'node:test';
import { clusterSlot } from '../../../support/cluster-slot.ts';


plainDescribe('the key charge script on a Redis Cluster', () => {
  plainTest('the slot function agrees with Redis (the documented example: 123456789 -> 12739)', () => {
    assert.equal(clusterSlot('123456789'), 12739);
    assert.equal(clusterSlot('{user1000}.following'), clusterSlot('{user1000}.followers'));
  });

  plainTest('every key one charge touches is in the same slot, for any username and key id', () => {
    for (const [owner, keyId] of [['alice', 'AbCdEfGhIjKl'], ['bob.smith-2', 'zzzzzzzzzzzz'], ['x', '000000000000']] as const) {
      const slots = new Set(keyChargeKeys('account-api:', owner, keyId).map(clusterSlot));
      assert.equal(slots.size, 1, `${owner}'s keys span ${slots.size} slots: ${keyChargeKeys('account-api:', owner, keyId).join(', ')}`);
    }
    // Different accounts spread over slots (the tag is the account, not a constant).
    const spread = new Set(['alice', 'bob', 'carol', 'dave'].map((owner) => clusterSlot(keyChargeKeys('p:', owner, 'k')[0])));
    assert.ok(spread.size > 1);
  });

  plainTest('the script names its keys only through KEYS (Redis Cluster refuses keys it cannot route)', () => {
    assert.doesNotMatch(KEY_CHARGE_SCRIPT, /redis\.call\('[A-Z]+', ARGV/, 'a key built from ARGV would escape the slot check');
  });
});

const skip = await redisSkipReason();
const { after, before, describe, test } = requiring(skip);

describe('the key charge script in Redis', () => {
  let redis: Redis;
  before(() => {
    redis = new Redis(TEST_REDIS_URL);
  });
  after(async () => {
    await redis.quit();
  });

  const budget = (prefix: string, options: { touchIntervalMs?: number; versionLifetimeMs?: number } = {}) =>
    new RedisKeyBudget(redis, { windowMs: 60_000, prefix, touchIntervalMs: options.touchIntervalMs ?? 60_000, versionLifetimeMs: options.versionLifetimeMs ?? 60_000 });

  test('counts, and keeps one version until a change is announced', async () => {
    const prefix = uniqueKeyPrefix();
    const charges = budget(prefix);
    const first = await charges.hit('alice', 'key1', 10);
    const second = await charges.hit('alice', 'key1', 10);
    assert.equal(first.current, 1);
    assert.equal(second.current, 2);
    assert.ok(first.version !== null && first.version.length > 0, 'a missing version is made');
    assert.equal(second.version, first.version, 'the version holds while nothing changes');
    await new RedisCredentialAnnouncer(redis, prefix, 30_000).credentialsChanged('Alice');
    const third = await charges.hit('alice', 'key1', 10);
    assert.notEqual(third.version, first.version, 'an announcement (whatever the username case) changes the version');
    const pttl = await redis.pttl(keyChargeKeys(prefix, 'alice', 'key1')[1]);
    assert.ok(pttl > 0 && pttl <= 60_000, `the version lives twice the max age: PTTL ${pttl}`);
  });

  test('a version lost (Redis restarted empty, or expired) is made anew, never the old one again', async () => {
    const prefix = uniqueKeyPrefix();
    const charges = budget(prefix);
    const before = await charges.hit('bob', 'key1', 10);
    await redis.del(keyChargeKeys(prefix, 'bob', 'key1')[1]);
    const after = await charges.hit('bob', 'key1', 10);
    assert.notEqual(after.version, before.version);
  });

  test('a stamp is due once per interval across every caller, and not for a request over the budget', async () => {
    const prefix = uniqueKeyPrefix();
    const one = budget(prefix);
    const other = budget(prefix); // another instance
    const dues = [];
    for (let i = 0; i < 6; i++) dues.push((await (i % 2 === 0 ? one : other).hit('carol', 'key1', 100)).touchDue);
    assert.deepEqual(dues, [true, false, false, false, false, false]);

    const spent = uniqueKeyPrefix();
    const tight = budget(spent);
    await tight.hit('dave', 'key1', 1);
    await redis.del(keyChargeKeys(spent, 'dave', 'key1')[2]);
    const over = await tight.hit('dave', 'key1', 1);
    assert.equal(over.current, 2);
    assert.equal(over.touchDue, false, 'a refused request must not use up the interval\'s stamp');
    assert.equal(await redis.exists(keyChargeKeys(spent, 'dave', 'key1')[2]), 0);
  });

  test('asks no version when told not to (a process that caches nothing), and counts nothing with no budget', async () => {
    const prefix = uniqueKeyPrefix();
    const charged = await budget(prefix, { versionLifetimeMs: 0 }).hit('erin', 'key1', 0);
    assert.equal(charged.version, null);
    assert.equal(charged.current, 0);
    assert.equal(await redis.exists(keyChargeKeys(prefix, 'erin', 'key1')[0]), 0);
    assert.equal(await redis.exists(keyChargeKeys(prefix, 'erin', 'key1')[1]), 0);
    assert.equal(charged.touchDue, true);
  });
});
