// Protects what only the SQLite store promises: WAL mode, a database file that never holds a key in clear, group commit,
// and waiting for another connection's lock on timers (the event loop goes on meanwhile) rather than inside SQLite.
// Everything both engines promise is in test/contract/store-contract.ts, run against SQLite by test/contract/sqlite.test.ts.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';

import { issueKey, KEY_PREFIXES } from '../../../src/domain/api-keys.ts';
import { retryWhileLocked } from '../../../src/store/sqlite/lock-wait.ts';
import { enableWal } from '../../../src/store/sqlite/sqlite-engine.ts';
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

/** Commits in the write-ahead log so far: frames whose header names the database size, which only a commit's last frame does. */
function commitsInWal(path: string): number {
  if (!existsSync(`${path}-wal`)) return 0;
  const wal = readFileSync(`${path}-wal`);
  if (wal.length < 32) return 0;
  const frameSize = 24 + wal.readUInt32BE(8);
  let commits = 0;
  for (let offset = 32; offset + frameSize <= wal.length; offset += frameSize) {
    if (wal.readUInt32BE(offset + 4) !== 0) commits++;
  }
  return commits;
}

/** Another connection holding SQLite's write lock, as the CLI, sqlite3 or a backup would; in this process, so timers can release it. */
function holdWriteLock(path: string) {
  const locker = new DatabaseSync(path);
  locker.exec('BEGIN IMMEDIATE');
  let held = true;
  return {
    get held() {
      return held;
    },
    release() {
      if (!held) return;
      held = false;
      locker.exec('COMMIT');
      locker.close();
    },
  };
}

const codeOf = (outcome: PromiseSettledResult<unknown>) =>
  outcome.status === 'rejected' ? ((outcome.reason as { code?: string }).code ?? String(outcome.reason)) : 'fulfilled';

describe('SQLite store: a lock held by another connection', () => {
  async function storeWithAccounts(count: number, busyTimeoutMs: number) {
    const path = freshPath();
    const store = new SqliteStore({ path, environment: 'live', synchronous: 'full', busyTimeoutMs });
    opened.push(store);
    await store.migrate();
    const ids: number[] = [];
    for (let i = 0; i < count; i++) ids.push((await store.createAccount({ username: `u${i}`, name: 'before', timezone: 'UTC', premium: true })).id);
    const storedName = (id: number) => {
      const db = new DatabaseSync(path, { readOnly: true });
      try {
        return String((db.prepare('SELECT name FROM accounts WHERE id = ?').get(id) as { name: string }).name);
      } finally {
        db.close();
      }
    };
    return { path, store, ids, storedName };
  }

  test('an update waits on timers while the lock is held, and is committed once it is released', async () => {
    const { path, store, ids, storedName } = await storeWithAccounts(1, 10_000);
    const lock = holdWriteLock(path);
    // Released by a timer: if the store waited inside SQLite, on this thread, the timer could not fire until it gave up.
    setTimeout(() => lock.release(), 100);
    const answer = await store.updateName(ids[0]!, 'after');
    assert.equal(lock.held, false, 'the update was answered while the other connection still held the lock');
    assert.equal(answer.name, 'after');
    assert.equal(storedName(ids[0]!), 'after', 'the answered update is not in the database');
  });

  test('gives up with store_busy once busyTimeoutMs has passed, serving the event loop meanwhile, and writes nothing', async () => {
    const busyTimeoutMs = 150;
    const { path, store, ids, storedName } = await storeWithAccounts(2, busyTimeoutMs);
    const lock = holdWriteLock(path);
    try {
      let ticks = 0;
      const ticking = setInterval(() => ticks++, 5);
      const started = performance.now();
      const outcomes = await Promise.allSettled(ids.map((id) => store.updateName(id, 'after')));
      const waited = performance.now() - started;
      clearInterval(ticking);
      assert.deepEqual(outcomes.map(codeOf), ['store_busy', 'store_busy']);
      assert.ok(waited >= busyTimeoutMs, `gave up after ${waited.toFixed(1)} ms, before the busy timeout of ${busyTimeoutMs} ms`);
      // Waiting inside SQLite, on this thread, would settle both updates before any timer ran: the 5 ms timer would not have
      // run once by the time they were answered. (Once, not a count per millisecond: a loaded machine may run it rarely.)
      assert.ok(ticks > 0, `a 5 ms timer never ran in ${waited.toFixed(0)} ms of waiting: the event loop was blocked`);
    } finally {
      lock.release();
    }
    for (const id of ids) assert.equal(storedName(id), 'before', 'a write that failed with store_busy was kept');
  });

  test('a batch waiting for the lock takes in the updates asked for meanwhile and commits them with it', async () => {
    const { path, store, ids, storedName } = await storeWithAccounts(4, 10_000);
    const lock = holdWriteLock(path);
    const first = [store.updateName(ids[0]!, 'first'), store.updateTimezone(ids[1]!, 'Asia/Tokyo')];
    await new Promise((resolve) => setTimeout(resolve, 30));
    const later = [store.updateName(ids[2]!, 'later'), store.updateName(ids[3]!, 'later')];
    const before = commitsInWal(path);
    lock.release();
    const answers = await Promise.all([...first, ...later]);
    assert.deepEqual(
      answers.map((account) => [account.id, account.name, account.timezone]),
      [
        [ids[0], 'first', 'UTC'],
        [ids[1], 'before', 'Asia/Tokyo'],
        [ids[2], 'later', 'UTC'],
        [ids[3], 'later', 'UTC'],
      ],
      'an update was answered with another row',
    );
    assert.deepEqual(ids.map(storedName), ['first', 'before', 'later', 'later']);
    // The other connection wrote nothing, so its commit appends no frame: every commit counted is the store's.
    assert.equal(commitsInWal(path) - before, 1, 'the four updates were not committed in one transaction after the release');
  });

  test('each update has its own deadline: one asked for later is still written when the first gives up', async () => {
    const { path, store, ids, storedName } = await storeWithAccounts(2, 300);
    const lock = holdWriteLock(path);
    const first = store.updateName(ids[0]!, 'first');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const later = store.updateName(ids[1]!, 'later');
    // The first gives up about 200 ms before the later one's deadline; the lock goes as soon as it has.
    const firstOutcome = await Promise.allSettled([first]);
    lock.release();
    assert.equal(codeOf(firstOutcome[0]!), 'store_busy');
    assert.equal((await later).name, 'later', 'the later update failed with the first one');
    assert.deepEqual(ids.map(storedName), ['before', 'later']);
  });

  test("a write outside the batch (the CLI's) waits on timers too, and succeeds once the lock is released", async () => {
    const { path, store } = await storeWithAccounts(0, 10_000);
    const lock = holdWriteLock(path);
    setTimeout(() => lock.release(), 50);
    const created = await store.createAccount({ username: 'late', name: 'Late', timezone: 'UTC', premium: false });
    assert.equal(lock.held, false, 'the account was answered as created while the other connection held the lock');
    assert.equal((await store.findAccount('late'))?.id, created.id);
  });

  test('reads do not wait for the write lock', async () => {
    const { path, store } = await storeWithAccounts(1, 10_000);
    const key = issueKey('live');
    await store.createKey('u0', { keyId: key.keyId, hash: key.hash, displayPrefix: key.displayPrefix, label: null });
    const lock = holdWriteLock(path);
    try {
      assert.equal((await store.findCredential(key.keyId))?.account.username, 'u0');
      assert.equal((await store.findAccount('u0'))?.name, 'before');
      await store.ping();
      assert.ok(lock.held, 'test setup: the lock was released before the reads were answered');
    } finally {
      lock.release();
    }
  });

  test("a key's last-used stamp never keeps its caller waiting for the lock, and is written once it is released", async () => {
    const { path, store } = await storeWithAccounts(1, 10_000);
    const key = issueKey('live');
    await store.createKey('u0', { keyId: key.keyId, hash: key.hash, displayPrefix: key.displayPrefix, label: null });
    const lastUsed = () => {
      const db = new DatabaseSync(path, { readOnly: true });
      try {
        return (db.prepare('SELECT last_used_at FROM api_keys WHERE key_id = ?').get(key.keyId) as { last_used_at: string | null }).last_used_at;
      } finally {
        db.close();
      }
    };
    const usedAt = new Date('2031-02-03T04:05:06.789Z');
    const lock = holdWriteLock(path);
    try {
      await store.touchKey(key.keyId, usedAt);
      assert.ok(lock.held, 'touchKey waited for the lock to be released');
      // A second stamp while the first waits is answered at once too.
      await store.touchKey(key.keyId, usedAt);
      assert.equal(lastUsed(), null, 'test setup: the stamp was written while the lock was held');
    } finally {
      lock.release();
    }
    // Closing writes what is still queued: a stamp answered early is not lost on a clean stop.
    await store.close();
    assert.equal(lastUsed(), usedAt.toISOString(), 'the stamp was never written after the lock was released');
  });

  test('an update and the stamps queued with it are committed in one transaction', async () => {
    const { path, store, ids } = await storeWithAccounts(1, 10_000);
    const keys = [issueKey('live'), issueKey('live')];
    for (const key of keys) await store.createKey('u0', { keyId: key.keyId, hash: key.hash, displayPrefix: key.displayPrefix, label: null });
    const before = commitsInWal(path);
    const usedAt = new Date();
    await Promise.all([...keys.map((key) => store.touchKey(key.keyId, usedAt)), store.updateName(ids[0]!, 'after')]);
    assert.equal(commitsInWal(path) - before, 1, 'two stamps and an update asked for together were not committed together');
    const listed = await store.listKeys('u0');
    assert.deepEqual(listed.map((key) => key.lastUsedAt), [usedAt.toISOString(), usedAt.toISOString()]);
  });
});

describe('retryWhileLocked', () => {
  const busy = () => Object.assign(new Error('database is locked'), { errcode: 5 });

  test('tries again on timers, letting the event loop run between attempts, until the work succeeds', async () => {
    let attempts = 0;
    let turns = 0;
    const turn = setInterval(() => turns++, 1);
    try {
      const result = await retryWhileLocked(() => {
        attempts++;
        if (attempts < 5) throw busy();
        return 'done';
      }, 5000);
      assert.equal(result, 'done');
      assert.equal(attempts, 5);
      assert.ok(turns > 0, 'no other timer ran while it waited: the event loop was blocked');
    } finally {
      clearInterval(turn);
    }
  });

  test('gives up with store_busy once the timeout has passed', async () => {
    const attemptsAt: number[] = [];
    const started = performance.now();
    await assert.rejects(
      retryWhileLocked(() => {
        attemptsAt.push(performance.now() - started);
        throw busy();
      }, 60),
      (error: { code?: string; kind?: string }) => error.code === 'store_busy' && error.kind === 'unavailable',
    );
    const waited = performance.now() - started;
    assert.ok(waited >= 60, `gave up after ${waited.toFixed(1)} ms, before the 60 ms timeout`);
    // How many attempts fit in 60 ms depends on how busy the machine is; that the last began at the timeout does not (an
    // attempt begun before it, by a timer firing a moment early, is followed by another).
    const last = attemptsAt.at(-1)!;
    assert.ok(last >= 60, `the last attempt was at ${last.toFixed(1)} ms: it stopped trying before the 60 ms timeout`);
  });

  test('any other error fails at once', async () => {
    let attempts = 0;
    await assert.rejects(
      retryWhileLocked(() => {
        attempts++;
        throw Object.assign(new Error('disk I/O error'), { errcode: 10 });
      }, 5000),
      /disk I\/O error/,
    );
    assert.equal(attempts, 1);
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
