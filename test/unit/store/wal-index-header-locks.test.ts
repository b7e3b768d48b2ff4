// The WAL-index header filter (src/store/sqlite/wal-index-header.ts, #refreshCache in src/store/credentials/sqlite.ts) against
// another process's locks: a reviewer's tests. Another process (python3, for POSIX fcntl locks, which Node has no API for)
// plays a connection in the middle of WAL recovery (it holds the WAL write and recover locks of the -shm file and leaves the
// two copies of the header unequal, as a recovery does), or checks whether this process still holds SQLite's lock on the -shm
// file.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';

import { WalIndexHeader } from '../../../src/store/sqlite/wal-index-header.ts';
import { cachedStoreWithKey } from '../../support/cached-sqlite-store.ts';

let dir: string;
let counter = 0;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'account-api-wal-review-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

// Commands on stdin, one a line; answers "ok"/"busy"/"free" on stdout.
//   recover: exclusive locks on WAL_WRITE_LOCK (byte 120) and WAL_RECOVER_LOCK (byte 122), and the second copy of the
//            header made to differ from the first (its unused field, bytes 52..55): a recovery in progress.
//   done:    the header copy restored and the locks released: the recovery is over.
//   corrupt: only the unequal copies (no locks): a commit half-written, as a reader may see it.
//   restore: the copy restored.
//   dms:     tries, without waiting, an exclusive lock on the DMS byte (128): "free" means no other process holds it
//            shared, i.e. this one would take itself for the only connection and reinitialise (truncate) the -shm file.
const HELPER = `
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
saved = None
def out(s):
    sys.stdout.write(s + "\\n"); sys.stdout.flush()
for line in sys.stdin:
    cmd = line.strip()
    if cmd in ("recover", "corrupt"):
        if cmd == "recover":
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 120)
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 122)
        saved = os.pread(fd, 4, 52)
        os.pwrite(fd, bytes(b ^ 0xff for b in saved), 52)
        out("ok")
    elif cmd in ("done", "restore"):
        os.pwrite(fd, saved, 52)
        if cmd == "done":
            fcntl.lockf(fd, fcntl.LOCK_UN, 1, 120)
            fcntl.lockf(fd, fcntl.LOCK_UN, 1, 122)
        out("ok")
    elif cmd == "dms":
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 128)
            fcntl.lockf(fd, fcntl.LOCK_UN, 1, 128)
            out("free")
        except OSError:
            out("busy")
`;

class OtherProcess {
  readonly #child: ChildProcessWithoutNullStreams;
  #buffered = '';
  readonly #waiting: ((line: string) => void)[] = [];

  constructor(shmPath: string) {
    this.#child = spawn('python3', ['-c', HELPER, shmPath]);
    this.#child.stdout.setEncoding('utf8');
    this.#child.stdout.on('data', (chunk: string) => {
      this.#buffered += chunk;
      let newline: number;
      while ((newline = this.#buffered.indexOf('\n')) !== -1) {
        const line = this.#buffered.slice(0, newline);
        this.#buffered = this.#buffered.slice(newline + 1);
        this.#waiting.shift()?.(line);
      }
    });
  }

  ask(command: string): Promise<string> {
    const answer = new Promise<string>((resolve) => this.#waiting.push(resolve));
    this.#child.stdin.write(`${command}\n`);
    return answer;
  }

  async end(): Promise<void> {
    this.#child.stdin.end();
    if (this.#child.exitCode === null) await once(this.#child, 'exit');
  }
}

const storeWithKey = (username: string) => cachedStoreWithKey(join(dir, `db-${++counter}`), username);

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

function pythonMissing(): string | false {
  if (spawnSync('python3', ['--version']).error === undefined) return false;
  const reason = 'python3 is not installed (Debian: apt-get install python3)';
  if (process.env.CI) throw new Error(`${reason}; .ci/run installs it and CI must run these tests`);
  return reason;
}

describe('credential cache and the WAL-index header, against another process holding locks', { skip: pythonMissing() }, () => {
  test('a revocation is not missed when the look that saw the header move found the database locked (WAL recovery)', async () => {
    const { path, store, keyId } = await storeWithKey('rita');
    const cached = await store.findCredential(keyId);
    assert.equal(cached?.revoked, false, 'set-up: the key should start active and now be cached');
    const cli = new DatabaseSync(path);
    const other = new OtherProcess(`${path}-shm`);
    try {
      // The CLI revokes the key (a commit by another connection)...
      cli.prepare('UPDATE api_keys SET revoked_at = ? WHERE key_id = ?').run(new Date().toISOString(), keyId);
      // ...and before the next request a third process is recovering the WAL index: readers get SQLITE_BUSY_RECOVERY.
      assert.equal(await other.ask('recover'), 'ok');
      await nextTurn();
      const lookup = Promise.resolve(store.findCredential(keyId));
      let settledWhileLocked = false;
      void lookup.then(
        () => (settledWhileLocked = true),
        () => (settledWhileLocked = true),
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(await other.ask('done'), 'ok');
      const seen = await lookup.catch((error: unknown) => error);
      assert.ok(
        !(seen !== null && typeof seen === 'object' && 'revoked' in seen && seen.revoked === false),
        `the lookup after the CLI's revocation answered the cached, unrevoked credential (settled while the database was still locked: ${settledWhileLocked})`,
      );
      // And not only that lookup: the next one, with the recovery over, must also see the revocation.
      await nextTurn();
      const next = await store.findCredential(keyId);
      assert.equal(next?.revoked, true, 'the lookup after the recovery still answered the cached, unrevoked credential');
    } finally {
      await other.end();
      cli.close();
      await store.close();
    }
  });

  test('opening and releasing the header of a -shm file in use by this process keeps SQLite’s locks on it', async () => {
    const folder = join(dir, `db-${++counter}`);
    mkdirSync(folder);
    const path = join(folder, 'test.db');
    const db = new DatabaseSync(path);
    db.exec('PRAGMA journal_mode = WAL; CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)');
    db.prepare('SELECT count(*) FROM t').get();
    const other = new OtherProcess(`${path}-shm`);
    try {
      assert.equal(await other.ask('dms'), 'busy', 'set-up: this process should hold SQLite’s DMS lock on the -shm file');
      // A header read while another process's commit is half-written (the two copies differ)...
      assert.equal(await other.ask('corrupt'), 'ok');
      const header = WalIndexHeader.open(path);
      assert.equal(header?.trusted, true, 'a header read mid-commit was not recognised (its first copy is whole)');
      header!.release(); // the file exists: the descriptor must stay open
      assert.equal(await other.ask('restore'), 'ok');
      // ...and neither opening nor releasing it has dropped a POSIX lock this process holds on the file, SQLite's included.
      assert.equal(
        await other.ask('dms'),
        'busy',
        'after WalIndexHeader.open and release, another process can take the DMS lock exclusively: it would take itself for the only connection and truncate/reinitialise the -shm file this process has mapped',
      );
    } finally {
      await other.end();
      db.close();
    }
  });
});
