// Protects the credential cache's first filter (src/store/sqlite/wal-index-header.ts): any commit, by any connection, moves
// the WAL-index header; nothing else does; a layout it does not know turns it off; and its descriptor is closed only when
// that cannot drop SQLite's locks. The cache's exactness end to end is the store test at the bottom.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';

import { WalIndexHeader } from '../../../src/store/sqlite/wal-index-header.ts';
import { cachedStoreWithKey } from '../../support/cached-sqlite-store.ts';

let dir: string;
let counter = 0;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'account-api-wal-index-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

function walDatabase(): { path: string; db: DatabaseSync } {
  const folder = join(dir, `db-${++counter}`);
  mkdirSync(folder);
  const path = join(folder, 'test.db');
  const db = new DatabaseSync(path);
  db.exec('PRAGMA journal_mode = WAL; CREATE TABLE t (x INTEGER)');
  return { path, db };
}

const openDescriptors = () => readdirSync('/proc/self/fd').length;

describe('WAL-index header', () => {
  test('is unchanged until a commit; a commit by another connection, or by its own, moves it once', () => {
    const { path, db } = walDatabase();
    const header = WalIndexHeader.open(path);
    assert.ok(header !== null, 'a WAL database with a -shm file was not recognised');
    assert.equal(header.trusted, true);
    assert.equal(header.unchanged(), true, 'the header moved without any commit');
    db.prepare('SELECT count(*) FROM t').get();
    assert.equal(header.unchanged(), true, 'a read moved the header');

    const other = new DatabaseSync(path);
    for (let round = 0; round < 50; round++) {
      const writer = round % 2 === 0 ? other : db;
      writer.prepare('INSERT INTO t VALUES (?)').run(round);
      assert.equal(header.unchanged(), false, `commit ${round} did not move the header`);
      // Until the look it prompted is accepted, the change stays: a look that failed must not use it up.
      assert.equal(header.unchanged(), false, `commit ${round} was forgotten before its look was accepted`);
      header.accept();
      assert.equal(header.unchanged(), true, `the header moved again after commit ${round} without a commit`);
    }
    // A checkpoint that empties the WAL, then a commit that starts it over: still seen.
    other.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    header.unchanged();
    header.accept();
    db.exec('INSERT INTO t VALUES (1)');
    assert.equal(header.unchanged(), false, 'a commit after a truncating checkpoint did not move the header');
    other.close();
    db.close();
    header.release();
  });

  test('is null for an in-memory database and a database without WAL; a -shm file of unknown layout never vouches', () => {
    assert.equal(WalIndexHeader.open(':memory:'), null);
    const folder = join(dir, `db-${++counter}`);
    mkdirSync(folder);
    const rollback = new DatabaseSync(join(folder, 'rollback.db'));
    rollback.exec('CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)');
    assert.equal(WalIndexHeader.open(join(folder, 'rollback.db')), null, 'a rollback-journal database has no WAL index');
    rollback.close();
    writeFileSync(join(folder, 'odd.db-shm'), Buffer.alloc(32 * 1024, 7));
    const odd = WalIndexHeader.open(join(folder, 'odd.db'));
    assert.ok(odd !== null);
    assert.equal(odd.trusted, false, 'an unknown layout was trusted');
    for (let look = 0; look < 3; look++) {
      assert.equal(odd.unchanged(), false, 'a header of unknown layout vouched that nothing changed');
      odd.accept();
    }
  });

  test('keeps its descriptor while the -shm file exists (closing it would drop SQLite locks), and closes it once the file is gone', () => {
    const { path, db } = walDatabase();
    const other = new DatabaseSync(path);
    other.prepare('SELECT count(*) FROM t').get(); // now it maps the -shm file too
    const header = WalIndexHeader.open(path)!;
    db.close();
    const withFile = openDescriptors();
    header.release();
    assert.equal(openDescriptors(), withFile, 'the descriptor was closed while another connection of this process uses the file');

    const { path: lastPath, db: last } = walDatabase();
    const alone = WalIndexHeader.open(lastPath)!;
    last.close(); // the last connection deletes the -shm file
    const gone = openDescriptors();
    alone.release();
    assert.equal(openDescriptors(), gone - 1, 'the descriptor of a deleted -shm file was not closed');
    alone.release(); // a store closed twice releases twice
    other.close();
  });
});

describe('SQLite store with the credential cache', () => {
  test("another connection's every change to a key is seen by the very next lookup, and the store's own writes keep it right", async () => {
    const { path, store, keyId } = await cachedStoreWithKey(join(dir, `db-${++counter}`), 'walter');
    const other = new DatabaseSync(path);
    try {
      for (let round = 0; round < 100; round++) {
        const revoked = round % 2 === 0;
        other.prepare('UPDATE api_keys SET revoked_at = ? WHERE key_id = ?').run(revoked ? new Date().toISOString() : null, keyId);
        const seen = await store.findCredential(keyId);
        assert.equal(seen?.revoked, revoked, `round ${round}: the lookup answered from a row older than the other connection's commit`);
        // A write of the store's own in between: it moves the header too, and must neither hide the next change nor answer stale.
        if (round % 3 === 0) await store.updateName(seen!.account.id, `walter ${round}`);
        const again = await store.findCredential(keyId);
        assert.equal(again?.revoked, revoked, `round ${round}: a second lookup disagrees with the first`);
        if (round % 3 === 0) assert.equal(again?.account.name, `walter ${round}`, `round ${round}: the store's own write is not seen`);
      }
    } finally {
      other.close();
      await store.close();
    }
  });

  test('the first lookup of a turn answers at once; those after it in the turn wait for one more look, and see a commit made in between', async () => {
    const { path, store, keyId } = await cachedStoreWithKey(join(dir, `db-${++counter}`), 'turner');
    await store.findCredential(keyId); // now cached
    const other = new DatabaseSync(path);
    try {
      for (let round = 0; round < 20; round++) {
        await new Promise((resolve) => setImmediate(resolve)); // a new turn
        const revoked = round % 2 === 0;
        // As requests read one after another in one poll phase: the first is answered at once from the cache...
        const first = store.findCredential(keyId);
        assert.ok(!(first instanceof Promise), `round ${round}: the first lookup of a turn waited for a promise`);
        assert.equal(first?.revoked, !revoked, `round ${round}: the first lookup answered stale`);
        // ...then another connection commits (the CLI revokes), and the requests read after that must see it.
        other.prepare('UPDATE api_keys SET revoked_at = ? WHERE key_id = ?').run(revoked ? new Date().toISOString() : null, keyId);
        const later = Array.from({ length: 5 }, () => store.findCredential(keyId));
        for (const [index, lookup] of later.entries()) {
          assert.ok(lookup instanceof Promise, `round ${round}: lookup ${index + 2} of the turn was answered without a new look`);
          assert.equal((await lookup)?.revoked, revoked, `round ${round}: lookup ${index + 2} missed the commit made before it`);
        }
      }
    } finally {
      other.close();
      await store.close();
    }
  });
});
