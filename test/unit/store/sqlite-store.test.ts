// Protects the SQLite store: migrations, accounts (ids never reused, names unique ignoring case), keys stored only as hashes.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { issueKey, keyMatches, KEY_PREFIXES, type IssuedKey } from '../../../src/domain/api-keys.ts';
import { DomainError } from '../../../src/domain/errors.ts';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.ts';
import type { NewAccount } from '../../../src/store/store.ts';

let dir: string;
let counter = 0;
const opened: SqliteStore[] = [];

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'account-api-store-'));
});

after(async () => {
  for (const store of opened) await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function freshPath(): string {
  counter++;
  return join(dir, `db-${counter}`, 'account-api.db');
}

function openStore(path: string = freshPath()): SqliteStore {
  const store = new SqliteStore({ path, synchronous: 'full', busyTimeoutMs: 2000 });
  opened.push(store);
  return store;
}

async function migratedStore(path: string = freshPath()): Promise<SqliteStore> {
  const store = openStore(path);
  await store.migrate();
  return store;
}

function account(username: string, overrides: Partial<NewAccount> = {}): NewAccount {
  return { username, name: username, timezone: 'UTC', premium: false, ...overrides };
}

function newKey(key: IssuedKey, label: string | null = null) {
  return { keyId: key.keyId, hash: key.hash, displayPrefix: key.displayPrefix, label };
}

/** Matches a rejection by its stable code (and kind when given). */
function domainCode(code: string, kind?: string) {
  return (error: unknown) => {
    assert.ok(error instanceof DomainError, `expected a DomainError '${code}', got ${String(error)}`);
    assert.equal(error.code, code, `wrong error code (message: ${error.message})`);
    if (kind !== undefined) assert.equal(error.kind, kind, `wrong kind for ${code}`);
    return true;
  };
}

describe('migrations', () => {
  test('migrate applies every migration once; a second run applies nothing', async () => {
    const store = openStore();
    const first = await store.migrate();
    assert.ok(first.applied.length > 0, 'the first migrate applied nothing');
    assert.deepEqual(first.applied, [...first.applied].sort((a, b) => a - b), 'migrations were not applied in order');
    assert.equal(first.applied.at(-1), first.current, 'the report does not end at the current version');
    const second = await store.migrate();
    assert.deepEqual(second.applied, [], 'the second migrate applied migrations again');
    assert.equal(second.current, first.current);
  });

  test('records each applied migration in schema_migrations', async () => {
    const path = freshPath();
    const store = await migratedStore(path);
    const report = await store.migrate();
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      const rows = db.prepare('SELECT version, name, applied_at FROM schema_migrations ORDER BY version').all();
      assert.equal(rows.length, report.current, 'one row per migration expected');
      for (const row of rows) {
        assert.equal(typeof row.name, 'string');
        assert.ok(!Number.isNaN(Date.parse(String(row.applied_at))), `applied_at '${String(row.applied_at)}' is not a date`);
      }
    } finally {
      db.close();
    }
  });

  test('checkSchema passes after migrate and fails before it', async () => {
    const unmigrated = openStore();
    await assert.rejects(unmigrated.checkSchema(), DomainError, 'checkSchema passed on an empty database');
    const store = await migratedStore();
    await store.checkSchema();
  });

  test('a schema version newer than the code makes migrate and checkSchema fail with schema_too_new', async () => {
    const path = freshPath();
    const store = await migratedStore(path);
    const db = new DatabaseSync(path);
    try {
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(999, 'from_the_future', new Date().toISOString());
    } finally {
      db.close();
    }
    await assert.rejects(store.migrate(), domainCode('schema_too_new'), 'migrate ran on a newer schema');
    await assert.rejects(store.checkSchema(), domainCode('schema_too_new'), 'checkSchema accepted a newer schema');
    const reopened = openStore(path);
    await assert.rejects(reopened.checkSchema(), domainCode('schema_too_new'), 'a fresh connection accepted a newer schema');
    await assert.rejects(reopened.checkSchema(), /newer than this build/, 'the message does not say the schema is newer');
  });

  test('puts the database in WAL mode', async () => {
    const path = freshPath();
    await migratedStore(path);
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      const row = db.prepare('PRAGMA journal_mode').get();
      assert.equal(String(row?.journal_mode).toLowerCase(), 'wal');
    } finally {
      db.close();
    }
  });
});

describe('accounts', () => {
  test('createAccount returns ids 1 and 2 and the stored fields', async () => {
    const store = await migratedStore();
    const first = await store.createAccount(account('alice', { name: 'Alice A.', timezone: 'Europe/Paris', premium: true }));
    const second = await store.createAccount(account('bob'));
    assert.equal(first.id, 1);
    assert.equal(second.id, 2);
    assert.equal(first.username, 'alice');
    assert.equal(first.name, 'Alice A.');
    assert.equal(first.timezone, 'Europe/Paris');
    assert.equal(first.premium, true);
    assert.equal(second.premium, false);
    assert.ok(!Number.isNaN(Date.parse(first.createdAt)), `createdAt '${first.createdAt}' is not a date`);
    assert.equal(await store.countAccounts(), 2);
    assert.deepEqual((await store.listAccounts()).map((a) => a.username), ['alice', 'bob']);
  });

  test('usernames are unique ignoring case', async () => {
    const store = await migratedStore();
    await store.createAccount(account('Carol'));
    for (const username of ['Carol', 'carol', 'CAROL', 'cArOl']) {
      await assert.rejects(store.createAccount(account(username)), domainCode('username_taken', 'conflict'), `'${username}' was created twice`);
    }
    assert.equal(await store.countAccounts(), 1, 'a refused account was stored anyway');
  });

  test('deleting the highest account and creating another never reuses its id', async () => {
    const store = await migratedStore();
    await store.createAccount(account('a1'));
    const highest = await store.createAccount(account('a2'));
    await store.deleteAccount('a2');
    const next = await store.createAccount(account('a3'));
    assert.ok(next.id > highest.id, `id ${highest.id} was reused (new id ${next.id})`);
    const again = await store.createAccount(account('a2'));
    assert.ok(again.id > next.id, 'recreating a deleted username reused an old id');
  });

  test('findAccount ignores case and returns null for an unknown name', async () => {
    const store = await migratedStore();
    const created = await store.createAccount(account('Dave.Smith'));
    for (const query of ['Dave.Smith', 'dave.smith', 'DAVE.SMITH']) {
      assert.deepEqual(await store.findAccount(query), created, `findAccount('${query}') did not find the account`);
    }
    assert.equal(await store.findAccount('nobody'), null);
    assert.equal(await store.findAccount('Dave.Smit'), null, 'a prefix matched');
  });

  test('setPremium switches Premium on and off', async () => {
    const store = await migratedStore();
    await store.createAccount(account('erin'));
    assert.equal((await store.setPremium('erin', true)).premium, true);
    assert.equal((await store.findAccount('erin'))?.premium, true, 'Premium on was not stored');
    assert.equal((await store.setPremium('ERIN', false)).premium, false, 'setPremium should ignore case');
    assert.equal((await store.findAccount('erin'))?.premium, false, 'Premium off was not stored');
  });

  test('updateName stores the name exactly and leaves the rest unchanged', async () => {
    const store = await migratedStore();
    const created = await store.createAccount(account('frank', { timezone: 'Asia/Tokyo', premium: true }));
    const name = '  Frànk 😀 山田  ';
    const updated = await store.updateName(created.id, name);
    assert.deepEqual(updated, { ...created, name }, 'updateName changed more than the name');
    assert.equal((await store.findAccount('frank'))?.name, name);
  });

  test('updateTimezone stores the timezone and leaves the rest unchanged', async () => {
    const store = await migratedStore();
    const created = await store.createAccount(account('grace', { name: 'Grace' }));
    const updated = await store.updateTimezone(created.id, 'America/Argentina/Buenos_Aires');
    assert.deepEqual(updated, { ...created, timezone: 'America/Argentina/Buenos_Aires' });
    assert.equal((await store.findAccount('grace'))?.timezone, 'America/Argentina/Buenos_Aires');
  });

  test('operations on a missing account fail with account_not_found', async () => {
    const store = await migratedStore();
    const notFound = domainCode('account_not_found', 'not_found');
    await assert.rejects(store.setPremium('ghost', true), notFound, 'setPremium on a missing account');
    await assert.rejects(store.deleteAccount('ghost'), notFound, 'deleteAccount on a missing account');
    await assert.rejects(store.updateName(999, 'x'), notFound, 'updateName on a missing account');
    await assert.rejects(store.updateTimezone(999, 'UTC'), notFound, 'updateTimezone on a missing account');
    await assert.rejects(store.createKey('ghost', newKey(issueKey('live'))), notFound, 'createKey on a missing account');
    await assert.rejects(store.listKeys('ghost'), notFound, 'listKeys on a missing account');
  });
});

describe('keys', () => {
  test('createKey returns the record and listKeys lists the account\'s keys', async () => {
    const store = await migratedStore();
    await store.createAccount(account('heidi'));
    await store.createAccount(account('ivan'));
    const first = issueKey('live');
    const second = issueKey('live');
    const other = issueKey('live');
    const record = await store.createKey('heidi', newKey(first, 'laptop'));
    assert.equal(record.keyId, first.keyId);
    assert.equal(record.username, 'heidi');
    assert.equal(record.label, 'laptop');
    assert.equal(record.displayPrefix, first.displayPrefix);
    assert.equal(record.lastUsedAt, null);
    assert.equal(record.revokedAt, null);
    assert.ok(!Number.isNaN(Date.parse(record.createdAt)), `createdAt '${record.createdAt}' is not a date`);
    await store.createKey('HEIDI', newKey(second));
    await store.createKey('ivan', newKey(other));
    const listed = await store.listKeys('heidi');
    assert.deepEqual(listed.map((key) => key.keyId).sort(), [first.keyId, second.keyId].sort(), 'listKeys returned the wrong keys');
    assert.equal(listed.find((key) => key.keyId === second.keyId)?.label, null);
  });

  test('findCredential returns the stored hash, the state and the owner', async () => {
    const store = await migratedStore();
    const owner = await store.createAccount(account('judy', { premium: true, name: 'Judy' }));
    const key = issueKey('live');
    await store.createKey('judy', newKey(key));
    const credential = await store.findCredential(key.keyId);
    assert.ok(credential !== null, 'the credential was not found');
    assert.equal(credential.keyId, key.keyId);
    assert.equal(credential.revoked, false);
    assert.deepEqual(credential.account, owner);
    assert.ok(Buffer.from(credential.hash).equals(Buffer.from(key.hash)), 'the stored hash differs from the issued one');
    assert.equal(keyMatches(key.token, credential.hash), true, 'the issued key does not match its stored hash');
    assert.equal(await store.findCredential('AAAAAAAAAAAA'), null, 'an unknown key id was found');
  });

  test('revokeKey sets revoked_at and a second revoke keeps the first time', async () => {
    const store = await migratedStore();
    await store.createAccount(account('ken'));
    const key = issueKey('live');
    await store.createKey('ken', newKey(key));
    const revoked = await store.revokeKey(key.keyId);
    assert.ok(revoked.revokedAt !== null, 'revokedAt was not set');
    assert.ok(!Number.isNaN(Date.parse(revoked.revokedAt)), `revokedAt '${revoked.revokedAt}' is not a date`);
    assert.equal((await store.findCredential(key.keyId))?.revoked, true, 'findCredential does not show the key as revoked');
    await sleep(5); // so that a second timestamp would differ from the first
    const again = await store.revokeKey(key.keyId);
    assert.equal(again.revokedAt, revoked.revokedAt, 'revoking again moved the revocation time');
    assert.equal((await store.listKeys('ken'))[0]?.revokedAt, revoked.revokedAt);
  });

  test('revokeKey of an unknown key fails with key_not_found', async () => {
    const store = await migratedStore();
    await assert.rejects(store.revokeKey('AAAAAAAAAAAA'), domainCode('key_not_found', 'not_found'));
  });

  test('touchKey records when the key was last used', async () => {
    const store = await migratedStore();
    await store.createAccount(account('liam'));
    const key = issueKey('live');
    await store.createKey('liam', newKey(key));
    const usedAt = new Date('2031-02-03T04:05:06.789Z');
    await store.touchKey(key.keyId, usedAt);
    const listed = (await store.listKeys('liam'))[0];
    assert.ok(listed?.lastUsedAt != null, 'lastUsedAt was not set');
    assert.equal(Date.parse(listed.lastUsedAt), usedAt.getTime(), `lastUsedAt is ${listed.lastUsedAt}`);
  });

  test('deleteAccount removes its keys', async () => {
    const store = await migratedStore();
    await store.createAccount(account('mallory'));
    const key = issueKey('live');
    await store.createKey('mallory', newKey(key));
    await store.deleteAccount('MALLORY');
    assert.equal(await store.findAccount('mallory'), null, 'the account survived deletion');
    assert.equal(await store.findCredential(key.keyId), null, 'the key of a deleted account still authenticates');
    await assert.rejects(store.revokeKey(key.keyId), domainCode('key_not_found'), 'the key of a deleted account still exists');
  });

  test('the database file never holds a key in clear', async () => {
    const path = freshPath();
    const store = await migratedStore(path);
    await store.createAccount(account('niaj'));
    const keys = [issueKey('live'), issueKey('sandbox')];
    for (const key of keys) await store.createKey('niaj', newKey(key, 'ci'));
    const bytes = Buffer.concat([path, `${path}-wal`].filter((file) => existsSync(file)).map((file) => readFileSync(file)));
    const text = bytes.toString('latin1');
    for (const key of keys) {
      // The key id is meant to be stored: finding it proves these bytes hold the rows we wrote.
      assert.ok(text.includes(key.keyId), 'test setup: the key id is not in the database bytes, so nothing was checked');
      assert.ok(!text.includes(key.token), 'the whole key is stored in clear');
      const secret = key.token.slice(KEY_PREFIXES[key.environment].length + key.keyId.length, -6);
      assert.equal(secret.length, 32);
      assert.ok(!text.includes(secret), 'the secret part of the key is stored in clear');
      assert.ok(bytes.includes(Buffer.from(key.hash)), 'the SHA-256 of the key is not what is stored');
    }
  });
});

describe('closing', () => {
  test('close() twice is safe', async () => {
    const store = await migratedStore();
    await store.close();
    await store.close();
    await assert.rejects(store.findAccount('x'), 'a closed store still answered');
  });
});
