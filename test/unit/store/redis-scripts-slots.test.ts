// Every Redis command and script the service sends names keys of one Redis Cluster slot (a cluster refuses any other with
// CROSSSLOT), proven by recording what each Redis user sends through a client that knows no other command.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import type { Redis } from 'ioredis';
import { RedisCounters } from '../../../src/http/limits/rate-counters.ts';
import { RedisKeyBudget } from '../../../src/http/limits/key-budget-script.ts';
import { RedisCredentialAnnouncer } from '../../../src/store/credentials/credential-versions.ts';
import type { RedisClient } from '../../../src/store/redis-client.ts';
import { clusterSlot } from '../../support/cluster-slot.ts';
import { REPO_ROOT } from '../../support/server-process.ts';

interface Sent {
  readonly command: string;
  readonly keys: readonly string[];
}

/** Answers the defined scripts and SET, records their keys, and throws on any other command: a new one must be added here. */
function recordingClient(): { client: RedisClient; sent: Sent[]; scripts: Map<string, { numberOfKeys: number; lua: string }> } {
  const sent: Sent[] = [];
  const scripts = new Map<string, { numberOfKeys: number; lua: string }>();
  const answers: Record<string, unknown> = { rateHit: [1, 1000], ratePeek: [1, 1000], rateRefund: 0, keyCharge: [1, 1000, 'v', 1] };
  const target: Record<string, unknown> = {
    defineCommand(name: string, definition: { numberOfKeys: number; lua: string }) {
      scripts.set(name, definition);
      target[name] = async (...args: unknown[]) => {
        sent.push({ command: name, keys: args.slice(0, definition.numberOfKeys).map(String) });
        return answers[name];
      };
    },
    async set(key: string) {
      sent.push({ command: 'SET', keys: [key] });
      return 'OK';
    },
  };
  const client = new Proxy(target, {
    get(object, property) {
      if (typeof property === 'symbol' || property in object || property === 'then') return object[property as string];
      throw new Error(`a Redis user sent ${property}, which this proof does not know: add it, with its keys, to redis-scripts-slots.test.ts`);
    },
  });
  return { client: client as unknown as RedisClient, sent, scripts };
}

const OWNERS = ['alice', 'bob.smith-2', 'x', 'ünïcode', 'a'.repeat(64)];
const ADDRESSES = ['addr:198.51.100.7', 'authfail:198.51.100.7', 'addr:2001:db8:5:6::/64', 'key:AbCdEfGhIjKl'];

test('every command and script sent names keys of a single slot, for any account, key and address', async () => {
  const { client, sent, scripts } = recordingClient();
  const counters = new RedisCounters(client, 60_000, 'account-api:rate:');
  const budget = new RedisKeyBudget(client as Redis, { windowMs: 60_000, prefix: 'account-api:', touchIntervalMs: 60_000, versionLifetimeMs: 60_000 });
  const announcer = new RedisCredentialAnnouncer(client, 'account-api:', 30_000);
  for (const key of ADDRESSES) {
    await counters.hit(key);
    await counters.peek(key);
    await counters.refund(key, Date.now() + 1000);
  }
  for (const owner of OWNERS) {
    await budget.hit(owner, 'AbCdEfGhIjKl', 10);
    await announcer.credentialsChanged(owner.toUpperCase());
  }
  assert.deepEqual([...new Set(sent.map((one) => one.command))].sort(), ['SET', 'keyCharge', 'rateHit', 'ratePeek', 'rateRefund']);
  for (const { command, keys } of sent) {
    assert.ok(keys.length > 0, `${command} was sent with no key: a cluster could not route it`);
    const slots = new Set(keys.map(clusterSlot));
    assert.equal(slots.size, 1, `${command} names keys of ${slots.size} slots: ${keys.join(', ')}`);
  }
  // The announcement lands in the slot the charge reads the version from.
  for (const owner of OWNERS) {
    const charge = sent.find((one) => one.command === 'keyCharge' && one.keys[1]!.includes(`{u:${owner}}`))!;
    const announced = sent.find((one) => one.command === 'SET' && one.keys[0]!.includes(`{u:${owner}}`))!;
    assert.equal(clusterSlot(announced.keys[0]!), clusterSlot(charge.keys[0]!), `${owner}'s announcement and charge are in different slots`);
  }
  for (const [name, { lua }] of scripts) {
    assert.doesNotMatch(lua, /redis\.call\('[A-Za-z]+', *ARGV/, `${name} names a key through ARGV, out of the cluster's sight`);
    assert.doesNotMatch(lua, /KEYS\[\s*[^\d\s]/, `${name} indexes KEYS by a variable: its keys cannot be checked here`);
  }
});

test('every script defined in src/ is one this proof has sent', () => {
  const defined = new Set<string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) {
        for (const match of readFileSync(path, 'utf8').matchAll(/defineCommand\('([A-Za-z]+)'/g)) defined.add(`${match[1]} (${relative(REPO_ROOT, path)})`);
      }
    }
  };
  walk(join(REPO_ROOT, 'src'));
  const names = [...defined].map((entry) => entry.split(' ')[0]).sort();
  assert.deepEqual(names, ['keyCharge', 'rateHit', 'ratePeek', 'rateRefund'], `scripts defined: ${[...defined].join(', ')}; prove a new one's keys above`);
});

test('the files that hold a Redis client are the ones whose commands are proven above (or send none)', () => {
  const users: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && /from '(ioredis|[./]*(store\/)?redis-client\.ts)'/.test(readFileSync(path, 'utf8'))) {
        users.push(relative(REPO_ROOT, path));
      }
    }
  };
  walk(join(REPO_ROOT, 'src'));
  assert.deepEqual(users.sort(), [
    // Pass the client along, open it, or ping it (readiness): no key.
    'src/app.ts',
    'src/cli/credential-notices.ts',
    // Send what the first test records.
    'src/http/limits/key-budget-script.ts',
    'src/http/limits/rate-counters.ts',
    'src/http/limits/rate-limits.ts',
    'src/http/port.ts',
    'src/server.ts',
    'src/store/credentials/credential-versions.ts',
    'src/store/redis-client.ts',
  ]);
});
