// REDIS_CLUSTER_NODES: a Redis Cluster named plainly by its seed nodes, refused when ambiguous or when it names what a cluster lacks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig, type Environment } from '../../src/config.ts';

const load = (env: Environment) => loadConfig(env, {}, '/tmp');

function refused(env: Environment, message: RegExp): void {
  assert.throws(() => load(env), (error: unknown) => {
    assert.ok(error instanceof ConfigError, `not a ConfigError: ${String(error)}`);
    assert.match(error.message, message);
    return true;
  });
}

test('host:port seeds, IPv6 literals and URLs are read as one cluster', () => {
  const config = load({ REDIS_CLUSTER_NODES: '127.0.0.1:7000, 127.0.0.1:7001,[::1]:7002' });
  assert.deepEqual(config.redis?.target, {
    cluster: true,
    nodes: ['redis://127.0.0.1:7000', 'redis://127.0.0.1:7001', 'redis://[::1]:7002'],
  });
  assert.equal(config.redis?.keyPrefix, 'account-api:');
  const secured = load({ REDIS_CLUSTER_NODES: 'rediss://app:s%40cret@10.0.0.1:6379,rediss://app:s%40cret@10.0.0.2:6379' });
  assert.deepEqual(secured.redis?.target, { cluster: true, nodes: ['rediss://app:s%40cret@10.0.0.1:6379', 'rediss://app:s%40cret@10.0.0.2:6379'] });
});

test('REDIS_URL alone is one Redis, as before', () => {
  assert.deepEqual(load({ REDIS_URL: 'redis://127.0.0.1:6379/2' }).redis?.target, { cluster: false, url: 'redis://127.0.0.1:6379/2' });
  assert.equal(load({}).redis, null);
});

test('both REDIS_URL and REDIS_CLUSTER_NODES is refused: which one is meant cannot be guessed', () => {
  refused({ REDIS_URL: 'redis://127.0.0.1:6379', REDIS_CLUSTER_NODES: '127.0.0.1:7000' }, /not both/);
});

test('a seed without a port, of another scheme, naming a database, or nothing at all is refused', () => {
  refused({ REDIS_CLUSTER_NODES: '127.0.0.1' }, /must name a host and a port/);
  refused({ REDIS_CLUSTER_NODES: 'http://127.0.0.1:7000' }, /must be host:port or start with redis:\/\//);
  refused({ REDIS_CLUSTER_NODES: 'redis://127.0.0.1:7000/3' }, /only database 0/);
  refused({ REDIS_CLUSTER_NODES: ' , ' }, /at least one/);
});

test('seeds with different credentials or schemes are refused: a cluster shares them', () => {
  refused({ REDIS_CLUSTER_NODES: 'redis://a:x@127.0.0.1:7000,redis://a:y@127.0.0.1:7001' }, /same scheme and credentials/);
  refused({ REDIS_CLUSTER_NODES: 'redis://127.0.0.1:7000,rediss://127.0.0.1:7001' }, /same scheme and credentials/);
});

test('a brace in REDIS_KEY_PREFIX is refused on a cluster too', () => {
  refused({ REDIS_CLUSTER_NODES: '127.0.0.1:7000', REDIS_KEY_PREFIX: '{app}:' }, /REDIS_KEY_PREFIX must not contain/);
});
