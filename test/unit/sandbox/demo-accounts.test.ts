// Protects the sandbox's seed: it creates the demo accounts with their published keys, and never changes an account it did not create.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { issueKey } from '../../../src/domain/api-keys.ts';
import { demoAccounts, seedDemoAccounts, type DemoAccount } from '../../../src/sandbox/demo-accounts.ts';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../../src/store/store.ts';

let dir: string;
let counter = 0;
const opened: Store[] = [];

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'account-api-seed-'));
});

after(async () => {
  for (const store of opened) await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Opens stores over one new sandbox database, migrated by the first. */
async function sandboxDatabase(): Promise<() => Promise<Store>> {
  const path = join(dir, `sandbox-${++counter}.db`);
  return async () => {
    const store = new SqliteStore({ path, environment: 'sandbox', synchronous: 'normal', busyTimeoutMs: 2000, credentialCacheSize: 100 });
    opened.push(store);
    await store.migrate();
    return store;
  };
}

function recordingLog() {
  const warnings: string[] = [];
  return { warnings, warn: (_details: object, message: string) => void warnings.push(message) };
}

function demo(username: string): DemoAccount {
  return demoAccounts().find((account) => account.username === username)!;
}

/** An account and its keys as the CLI would show them, to compare before and after a seed. */
async function snapshot(store: Store, username: string) {
  return { account: await store.findAccount(username), keys: await store.listKeys(username) };
}

test('a new sandbox database gets every demo account, with its published key and Premium as the README shows', async () => {
  const store = await (await sandboxDatabase())();
  const log = recordingLog();
  const seeded = await seedDemoAccounts(store, log);
  assert.deepEqual(seeded.map((account) => account.username), ['demo', 'demo-basic']);
  assert.deepEqual(log.warnings, []);
  for (const expected of demoAccounts()) {
    const credential = await store.findCredential(expected.key.keyId);
    assert.equal(credential?.account.username, expected.username, `${expected.username} does not hold its demo key`);
    assert.equal(credential.account.premium, expected.premium);
    assert.equal(credential.account.name, expected.name);
    assert.equal((await store.listKeys(expected.username)).length, 1, `${expected.username} should hold its demo key only`);
  }
});

test('seeding again restores Premium on its own accounts, keeps what callers changed, and adds nothing', async () => {
  const store = await (await sandboxDatabase())();
  await seedDemoAccounts(store, recordingLog());
  const seeded = (await store.findAccount('demo'))!;
  await store.setPremium('demo', false);
  await store.updateName(seeded.id, 'Renamed By A Caller');
  await store.setPremium('demo-basic', true);
  const log = recordingLog();
  await seedDemoAccounts(store, log);
  assert.deepEqual(log.warnings, []);
  const after = (await store.findAccount('demo'))!;
  assert.deepEqual(after, { ...seeded, name: 'Renamed By A Caller' }, 'Premium was not restored, or more than Premium changed');
  assert.equal((await store.findAccount('demo-basic'))?.premium, false, "demo-basic's Premium was not taken back");
  assert.equal(await store.countAccounts(), 2);
  assert.equal((await store.listKeys('demo')).length, 1);
});

for (const spelling of ['demo', 'DEMO']) {
  test(`an account named ${spelling} that the seed did not create is left untouched, reported, and not advertised`, async () => {
    const store = await (await sandboxDatabase())();
    await store.createAccount({ username: spelling, name: 'Someone Else', timezone: 'Asia/Tokyo', premium: false });
    await store.createKey(spelling, { ...newKeyFields(), label: 'their own' });
    const before = await snapshot(store, 'demo');
    const log = recordingLog();
    const seeded = await seedDemoAccounts(store, log);
    assert.deepEqual(await snapshot(store, 'demo'), before, 'the seed changed an account it did not create');
    assert.equal(await store.findCredential(demo('demo').key.keyId), null, 'the published key was stored anyway');
    assert.deepEqual(seeded.map((account) => account.username), ['demo-basic'], 'the unavailable demo account was advertised');
    assert.equal(log.warnings.length, 1, `one warning expected: ${log.warnings.join('\n')}`);
    assert.match(log.warnings[0]!, /'demo' unavailable/);
    assert.match(log.warnings[0]!, /users delete demo --sandbox/, 'the warning should say how to get the demo account back');
  });
}

test('a demo account whose key was revoked keeps it revoked, and is reported rather than advertised', async () => {
  const store = await (await sandboxDatabase())();
  await seedDemoAccounts(store, recordingLog());
  await store.revokeKey(demo('demo').key.keyId);
  const log = recordingLog();
  const seeded = await seedDemoAccounts(store, log);
  assert.deepEqual(seeded.map((account) => account.username), ['demo-basic']);
  assert.match(log.warnings.join('\n'), /revoked/);
  assert.equal((await store.findCredential(demo('demo').key.keyId))?.revoked, true, 'the seed brought a revoked key back');
});

test('two sandbox instances seeding one new database at once both succeed, and each demo account exists once', async () => {
  const open = await sandboxDatabase();
  const [first, second] = [await open(), await open()];
  const logs = [recordingLog(), recordingLog()];
  const results = await Promise.all([seedDemoAccounts(first, logs[0]!), seedDemoAccounts(second, logs[1]!)]);
  for (const result of results) assert.deepEqual(result.map((account) => account.username), ['demo', 'demo-basic']);
  assert.deepEqual([...logs[0]!.warnings, ...logs[1]!.warnings], [], 'a racing seed took the other one for a stranger');
  assert.equal(await first.countAccounts(), 2);
});

function newKeyFields() {
  const key = issueKey('sandbox');
  return { keyId: key.keyId, hash: key.hash, displayPrefix: key.displayPrefix };
}
