// Tells, with one read of 96 bytes, whether any connection may have committed since the last look: the header of SQLite's
// WAL index (the database's -shm file) changes with every commit, whichever process makes it.
//
// Why: the credential cache must see another connection's commit (a revocation by the CLI, another worker) on the very next
// request. `PRAGMA data_version` tells exactly, but it is a read transaction, with file locks taken and released (three
// system calls, ~1.9 µs on this machine) on every authenticated request. Reading the header is one pread (~0.8 µs). It is a
// first filter only: when the header moved, the store still asks data_version, which alone says whether the commit was
// another connection's (our own commits move the header too, and must not empty the cache).
//
// The layout read here (https://www.sqlite.org/walformat.html, "The WAL-Index Header") is shared memory between processes
// that may run different SQLite versions, which is why it does not change; the header is checked at open (version 3007000,
// in the host's byte order, initialised, both copies equal) and, when it is not what is expected, the store falls back to data_version alone.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** Two copies of the 48-byte header: a writer updates the second, then the first, so a read mid-commit still differs. */
const HEADER_BYTES = 96;
const WAL_INDEX_VERSION = 3007000;

export class WalIndexHeader {
  readonly #fd: number;
  readonly #seen: Buffer;
  readonly #scratch = Buffer.alloc(HEADER_BYTES);
  #closed = false;

  private constructor(fd: number, first: Buffer) {
    this.#fd = fd;
    this.#seen = first;
  }

  /**
   * The header of the database at `databasePath`, or null when it has none this can read (an in-memory database, no -shm
   * file yet, an unexpected layout). Call it after the connection has read once, so that the -shm file exists.
   */
  static open(databasePath: string): WalIndexHeader | null {
    if (databasePath === ':memory:' || databasePath === '') return null;
    let fd: number;
    try {
      fd = openSync(`${databasePath}-shm`, 'r');
    } catch {
      return null;
    }
    const first = Buffer.alloc(HEADER_BYTES);
    const read = readSync(fd, first, 0, HEADER_BYTES, 0);
    const recognised =
      read === HEADER_BYTES &&
      (first.readUInt32LE(0) === WAL_INDEX_VERSION || first.readUInt32BE(0) === WAL_INDEX_VERSION) &&
      first[12] === 1 &&
      first.subarray(0, HEADER_BYTES / 2).equals(first.subarray(HEADER_BYTES / 2));
    if (!recognised) {
      // Closing here is safe only because nothing was learned: see release() for why it is otherwise not.
      closeSync(fd);
      return null;
    }
    return new WalIndexHeader(fd, first);
  }

  /** True when the header is as it was at the last look (no commit since, by anyone); remembers what it read. */
  unchanged(): boolean {
    readSync(this.#fd, this.#scratch, 0, HEADER_BYTES, 0);
    if (this.#scratch.equals(this.#seen)) return true;
    this.#scratch.copy(this.#seen);
    return false;
  }

  /**
   * After the connection is closed. Closing any descriptor of a file drops every POSIX lock this process holds on it, and
   * SQLite's other connections in this process (another store, a test's) lock the -shm file: the descriptor is closed only
   * when the file is gone (the last connection deletes it), and otherwise kept until the process exits.
   */
  release(): void {
    if (this.#closed || fstatSync(this.#fd).nlink !== 0) return;
    closeSync(this.#fd);
    this.#closed = true;
  }
}
