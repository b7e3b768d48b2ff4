// REDIS_KEY_PREFIX cannot move a charge's hash tag: a prefix with a brace is refused, so every script's keys share one Redis
// Cluster slot (a brace would make Redis Cluster hash another part of the key, and one charge would span several slots).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../../../src/config.ts';
import { keyChargeKeys } from '../../../../src/http/limits/key-budget-script.ts';
import { clusterSlot } from '../../../support/cluster-slot.ts';


test('the slot function agrees with Redis Cluster on a known key', () => {
  // CLUSTER KEYSLOT foo answers 12182 (Redis Cluster specification).
  assert.equal(clusterSlot('foo'), 12182);
});

for (const prefix of ['app{1:', 'app}:', '{app}:']) {
  test(`REDIS_KEY_PREFIX '${prefix}' is refused, naming the braces`, () => {
    assert.throws(() => loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379', REDIS_KEY_PREFIX: prefix }, {}, '/tmp'), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /REDIS_KEY_PREFIX must not contain/);
      return true;
    });
  });
}

test('with the default prefix and an accepted one, one charge keys a single slot', () => {
  for (const env of [{}, { REDIS_KEY_PREFIX: 'tenant-7:' }]) {
    const config = loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379', ...env }, {}, '/tmp');
    const keys = keyChargeKeys(config.redis!.keyPrefix, 'alice', 'AbCdEfGhIjKl');
    assert.equal(new Set(keys.map(clusterSlot)).size, 1, `one charge's keys span several slots: ${keys.join(', ')}`);
  }
});
