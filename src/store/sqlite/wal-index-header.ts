// Tells, with one read of 96 bytes, whether any connection may have committed since the last look: the header of SQLite's
// WAL index (the database's -shm file) changes with every commit, whichever process makes it.
//
// Performance trick. Relies on: the WAL-index header layout (https://www.sqlite.org/walformat.html), shared memory between
// processes of different SQLite versions and so fixed; checked at open (version 3007000, initialised), and when it is not
// as expected every look asks data_version. Guarded by: test/unit/store/wal-index-header.test.ts and
// test/unit/store/wal-index-header-locks.test.ts. Figures: docs/operations.md#the-wal-index-read
//
// Why: the credential cache must see another connection's commit on the very next request, and `PRAGMA data_version` is a
// read transaction with file locks on every request; one pread is less. It is a first filter only: when the header moved,
// data_version still decides whether the commit was another connection's (our own move it too).
//
// Closing any descriptor of a file drops every POSIX lock this process holds on it, and SQLite locks the -shm file (among
// others, the lock that tells other processes this one has it mapped: without it, the next to open would reinitialise it).
// So the descriptor opened here is never closed while the file exists, not even when its header is refused (see release()).
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** Two copies of the 48-byte header: a writer updates the second, then the first, so a read mid-commit still differs. */
const HEADER_BYTES = 96;
const WAL_INDEX_VERSION = 3007000;

export class WalIndexHeader {
  readonly #fd: number;
  /** False when the header is not of the known layout: then it never vouches that nothing changed. */
  readonly #trusted: boolean;
  readonly #seen: Buffer;
  readonly #scratch = Buffer.alloc(HEADER_BYTES);
  #closed = false;

  private constructor(fd: number, first: Buffer, trusted: boolean) {
    this.#fd = fd;
    this.#seen = first;
    this.#trusted = trusted;
  }

  /**
   * The header of the database at `databasePath`, or null when it has no -shm file to read (an in-memory database, no
   * -shm file yet). Call it after the connection has read once, so that the -shm file exists.
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
    // The first copy only: a commit in progress in another process may leave the two unequal for a moment.
    const trusted =
      read === HEADER_BYTES && (first.readUInt32LE(0) === WAL_INDEX_VERSION || first.readUInt32BE(0) === WAL_INDEX_VERSION) && first[12] === 1;
    return new WalIndexHeader(fd, first, trusted);
  }

  get trusted(): boolean {
    return this.#trusted;
  }

  /**
   * True when the header is as it was at the last accepted look (no commit since, by anyone). False otherwise, and then the
   * caller looks the long way and, only once that look succeeded, calls accept(): a look that failed (a locked database)
   * must not use up the change, or the next would find nothing to look at.
   */
  unchanged(): boolean {
    readSync(this.#fd, this.#scratch, 0, HEADER_BYTES, 0);
    return this.#trusted && this.#scratch.equals(this.#seen);
  }

  /** The header read by the last unchanged() (before the look it prompted) is now the one seen. */
  accept(): void {
    this.#scratch.copy(this.#seen);
  }

  /**
   * After the connection is closed: the descriptor is closed only when the file is gone (the last connection deletes it).
   * Otherwise SQLite's other connections in this process (another store, a test's) may still hold locks on it, and it is
   * kept until the process exits.
   */
  release(): void {
    if (this.#closed || fstatSync(this.#fd).nlink !== 0) return;
    closeSync(this.#fd);
    this.#closed = true;
  }
}
