// Protects what only the SQLite store promises: WAL mode, and a database file that never holds a key in clear.
// Everything both engines promise is in test/contract/store-contract.ts, run against SQLite by test/contract/sqlite.test.ts.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';

import { issueKey, KEY_PREFIXES } from '../../../src/domain/api-keys.ts';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.ts';

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

async function migratedStore(path: string): Promise<SqliteStore> {
  const store = new SqliteStore({ path, synchronous: 'full', busyTimeoutMs: 2000 });
  opened.push(store);
  await store.migrate();
  return store;
}

describe('SQLite store', () => {
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

  test('the database file never holds a key in clear', async () => {
    const path = freshPath();
    const store = await migratedStore(path);
    await store.createAccount({ username: 'niaj', name: 'niaj', timezone: 'UTC', premium: false });
    const keys = [issueKey('live'), issueKey('sandbox')];
    for (const key of keys) {
      await store.createKey('niaj', { keyId: key.keyId, hash: key.hash, displayPrefix: key.displayPrefix, label: 'ci' });
    }
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
