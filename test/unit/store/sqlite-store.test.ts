// Protects what only the SQLite store promises: WAL mode, and a database file that never holds a key in clear.
// Everything both engines promise is in test/contract/store-contract.ts, run against SQLite by test/contract/sqlite.test.ts.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';

import { issueKey, KEY_PREFIXES } from '../../../src/domain/api-keys.ts';
import { enableWal, SqliteStore } from '../../../src/store/sqlite/sqlite-store.ts';

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
  const store = new SqliteStore({ path, environment: 'live', synchronous: 'full', busyTimeoutMs: 2000 });
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

  describe('group commit of account updates', () => {
    async function withAccounts(count: number, options: { busyTimeoutMs?: number } = {}) {
      const path = freshPath();
      const store = new SqliteStore({ path, environment: 'live', synchronous: 'full', busyTimeoutMs: options.busyTimeoutMs ?? 2000 });
      opened.push(store);
      await store.migrate();
      const ids: number[] = [];
      for (let i = 0; i < count; i++) ids.push((await store.createAccount({ username: `u${i}`, name: 'before', timezone: 'UTC', premium: true })).id);
      const readBack = (id: number) => {
        const db = new DatabaseSync(path, { readOnly: true });
        try {
          return db.prepare('SELECT name, timezone FROM accounts WHERE id = ?').get(id) as { name: string; timezone: string };
        } finally {
          db.close();
        }
      };
      return { path, store, ids, readBack };
    }

    test('updates asked for together are committed in one transaction, each answered with its own row', async () => {
      const { store, ids, readBack, path } = await withAccounts(50);
      // Every commit appends at least one page to the write-ahead log; 50 separate commits would append at least 50.
      const walPages = () => {
        const size = existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0;
        return size === 0 ? 0 : (size - 32) / (24 + 4096);
      };
      const before = walPages();
      const answers = await Promise.all(
        ids.map((id, i) => (i % 2 === 0 ? store.updateName(id, `name ${i}`) : store.updateTimezone(id, 'Asia/Tokyo'))),
      );
      const appended = walPages() - before;
      assert.ok(appended > 0 && appended < 10, `the 50 updates appended ${appended} pages to the log: not one transaction`);
      for (const [i, id] of ids.entries()) {
        assert.equal(answers[i]!.id, id, 'an answer carries another account');
        const expected = i % 2 === 0 ? { name: `name ${i}`, timezone: 'UTC' } : { name: 'before', timezone: 'Asia/Tokyo' };
        assert.deepEqual({ name: answers[i]!.name, timezone: answers[i]!.timezone }, expected, `answer ${i}`);
        assert.deepEqual({ ...readBack(id) }, expected, `stored row ${i}`);
      }
    });

    test('an update of a deleted account fails alone; the rest of its batch is written', async () => {
      const { store, ids, readBack } = await withAccounts(3);
      await store.deleteAccount('u1');
      const outcomes = await Promise.allSettled(ids.map((id) => store.updateName(id, 'after')));
      assert.deepEqual(outcomes.map((outcome) => outcome.status), ['fulfilled', 'rejected', 'fulfilled']);
      assert.equal(((outcomes[1] as PromiseRejectedResult).reason as { code?: string }).code, 'account_not_found');
      assert.equal(readBack(ids[0]!).name, 'after');
      assert.equal(readBack(ids[2]!).name, 'after');
    });

    test('when the database stays locked, the whole batch fails with store_busy and nothing is written', async () => {
      const { store, ids, readBack, path } = await withAccounts(3, { busyTimeoutMs: 50 });
      const locker = new DatabaseSync(path);
      locker.exec('BEGIN IMMEDIATE');
      try {
        const outcomes = await Promise.allSettled(ids.map((id) => store.updateName(id, 'after')));
        for (const outcome of outcomes) {
          assert.equal(outcome.status, 'rejected');
          assert.equal(((outcome as PromiseRejectedResult).reason as { code?: string }).code, 'store_busy');
        }
      } finally {
        locker.exec('ROLLBACK');
        locker.close();
      }
      for (const id of ids) assert.equal(readBack(id).name, 'before', 'a write of a failed batch was kept');
      const again = await store.updateName(ids[0]!, 'after');
      assert.equal(again.name, 'after', 'the store did not recover once the lock was gone');
    });
  });
});

describe('enableWal', () => {
  const busy = () => Object.assign(new Error('database is locked'), { errcode: 5 });

  test('retries while SQLite answers SQLITE_BUSY, then succeeds', () => {
    let calls = 0;
    const db = {
      exec(sql: string) {
        assert.equal(sql, 'PRAGMA journal_mode = WAL');
        calls++;
        if (calls < 4) throw busy();
      },
    };
    enableWal(db, 5000);
    assert.equal(calls, 4);
  });

  test('gives up with the SQLite error once the busy timeout has passed', () => {
    let clock = 0;
    let calls = 0;
    const db = {
      exec() {
        calls++;
        clock += 100;
        throw busy();
      },
    };
    assert.throws(() => enableWal(db, 250, () => clock), /database is locked/);
    assert.equal(calls, 3, 'it tried past the timeout, or not until it');
  });

  test('any other error is thrown at once', () => {
    let calls = 0;
    const db = {
      exec() {
        calls++;
        throw Object.assign(new Error('disk I/O error'), { errcode: 10 });
      },
    };
    assert.throws(() => enableWal(db, 5000), /disk I\/O error/);
    assert.equal(calls, 1);
  });
});
