// Tells, with one read of 96 bytes, whether any connection may have committed since the last look: the header of SQLite's
// WAL index (the database's -shm file) changes with every commit, whichever process makes it.
//
// Performance trick. Relies on: the WAL-index header layout (https://www.sqlite.org/walformat.html), shared memory between
// processes of different SQLite versions and so fixed; checked at open (version 3007000, initialised), and when it is not
// as expected every look asks data_version. Guarded by: test/unit/store/wal-index-header.test.ts and
// test/unit/store/wal-index-header-locks.test.ts. Figures: docs/operations.md#the-wal-index-read
//
// Why: the credential cache must see another connection's commit on the next request; data_version is a read transaction
// with file locks, one pread is less. A first filter only: data_version still decides whose commit it was.
//
// Closing any descriptor of a file drops this process's POSIX locks on it (SQLite's -shm locks included), so the
// descriptor opened here is never closed while the file exists (release()).
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** Two copies of the 48-byte header: a writer updates the second, then the first, so a read mid-commit still differs. */
const HEADER_BYTES = 96;
const WAL_INDEX_VERSION = 3007000;

export class WalIndexHeader {
  readonly #fd: number;
  /** False for an unknown layout: then it never vouches that nothing changed. */
  readonly #trusted: boolean;
  readonly #seen: Buffer;
  readonly #scratch = Buffer.alloc(HEADER_BYTES);
  #closed = false;

  private constructor(fd: number, first: Buffer, trusted: boolean) {
    this.#fd = fd;
    this.#seen = first;
    this.#trusted = trusted;
  }

  /** Null without a -shm file (in memory, or not yet made): call after the connection has read once. */
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
   * Unchanged since the last accepted look. When false, call accept() only after the long look succeeded: a failed look must
   * not use up the change.
   */
  unchanged(): boolean {
    readSync(this.#fd, this.#scratch, 0, HEADER_BYTES, 0);
    return this.#trusted && this.#scratch.equals(this.#seen);
  }

  accept(): void {
    this.#scratch.copy(this.#seen);
  }

  /** Closes the descriptor only once the file is gone: other connections in this process may still hold locks on it. */
  release(): void {
    if (this.#closed || fstatSync(this.#fd).nlink !== 0) return;
    closeSync(this.#fd);
    this.#closed = true;
  }
}
