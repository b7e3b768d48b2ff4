// One SQLite connection (node:sqlite, WAL) and what every concern's part runs on: statements prepared once by their text, work
// that waits out another connection's lock on timers, transactions, group commit, backup. It names no table: the SQL lives
// beside each concern's interface (accounts/sqlite.ts, keys/sqlite.ts, ...).
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { backup, DatabaseSync, type StatementSync } from 'node:sqlite';
import { DomainError } from '../../domain/errors.ts';
import { retryWhileLocked } from './lock-wait.ts';
import { isBusy, translate } from './sqlite-errors.ts';
import { WriteQueue, type QueuedWrite } from './write-queue.ts';
import { textOrNull, type Values } from '../rows.ts';

export type { Row } from '../rows.ts';
/** The engine's prepared statements by SQL text (SqliteEngine.statement): the handle every part's SQL runs through. */
export type Prepare = (sql: string) => StatementSync;

/** node:sqlite's values: times are ISO text as written, booleans 0 or 1, lists JSON text. */
export const SQLITE_VALUES: Values = {
  time: String,
  timeOrNull: textOrNull,
  flag: (value) => Number(value) === 1,
  list: (value) => (value === null || value === undefined ? null : (JSON.parse(String(value)) as string[])),
};

export interface SqliteEngineOptions {
  /** A file path, or ':memory:'. */
  readonly path: string;
  /** FULL survives power loss; NORMAL survives a process crash only. */
  readonly synchronous: 'full' | 'normal';
  /** How long a statement waits for a lock another connection holds, on timers (see lock-wait.ts), before store_busy. */
  readonly busyTimeoutMs: number;
}

/** A write of the group commit (write-queue.ts): what it does inside the batch's transaction, and how it is answered after. */
export interface BatchWrite<T = unknown> extends QueuedWrite {
  /** Runs inside the batch's transaction, which holds the write lock; a DomainError fails this write alone. */
  apply(): T;
  /** Runs once the batch is committed, with what apply returned: only now may a cache hold its rows. */
  settle(outcome: T): void;
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Switching a database to WAL takes an exclusive lock. Two processes opening a new database at the same instant (two CLI
 * commands, say) can deadlock on it, and SQLite then answers SQLITE_BUSY at once instead of calling the busy handler; so
 * this waits and retries, synchronously (it runs while opening), for as long as the busy timeout allows.
 */
export function enableWal(db: Pick<DatabaseSync, 'exec'>, busyTimeoutMs: number, now: () => number = Date.now): void {
  const deadline = now() + busyTimeoutMs;
  for (let attempt = 0; ; attempt++) {
    try {
      db.exec('PRAGMA journal_mode = WAL');
      return;
    } catch (error) {
      if (!isBusy(error) || now() >= deadline) throw error;
      Atomics.wait(pause, 0, 0, Math.min(50, 2 ** attempt));
    }
  }
}

/** sqlite3_backup_step's page count: all of them in one step (node:sqlite refuses -1, SQLite's own "all"). */
const EVERY_PAGE = 2 ** 31 - 1;

export class SqliteEngine {
  readonly path: string;
  readonly #db: DatabaseSync;
  readonly #statements = new Map<string, StatementSync>();
  readonly #busyTimeoutMs: number;
  readonly #writes: WriteQueue<BatchWrite>;
  readonly #onClose: (() => void)[] = [];

  constructor(options: SqliteEngineOptions) {
    this.path = options.path;
    if (options.path !== ':memory:') mkdirSync(dirname(options.path), { recursive: true });
    // Opening (start-up, or a CLI command) may wait for locks inside SQLite; from opened() on, nothing does.
    this.#db = new DatabaseSync(options.path, { enableForeignKeyConstraints: true, timeout: options.busyTimeoutMs });
    enableWal(this.#db, options.busyTimeoutMs);
    this.#db.exec(`PRAGMA synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    this.#busyTimeoutMs = options.busyTimeoutMs;
    this.#writes = new WriteQueue(options.busyTimeoutMs, this.#commitBatch);
  }

  /**
   * Called once every part is built. SQLite's busy handler sleeps on the calling thread, which here is the event loop: a
   * locked database now answers SQLITE_BUSY at once, and run and the write queue wait for it on timers, up to busyTimeoutMs.
   */
  opened(): void {
    this.#db.exec('PRAGMA busy_timeout = 0');
  }

  /** Prepared once per SQL text: parsing is most of the cost of a small query. */
  readonly statement: Prepare = (sql) => {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  };

  exec(sql: string): void {
    this.#db.exec(sql);
  }

  run<T>(work: () => T): Promise<T> {
    try {
      return Promise.resolve(work());
    } catch (error) {
      // Locked by another connection: reads in WAL mode almost never are, writes outside the batch (the CLI's) may be.
      if (isBusy(error)) return retryWhileLocked(work, this.#busyTimeoutMs);
      return Promise.reject(translate(error));
    }
  }

  transaction<T>(work: () => T): T {
    this.#db.exec('BEGIN IMMEDIATE');
    try {
      const result = work();
      this.#db.exec('COMMIT');
      return result;
    } catch (error) {
      // A failed COMMIT may already have rolled back: a second error must not hide the first.
      if (this.#db.isTransaction) this.#db.exec('ROLLBACK');
      throw error;
    }
  }

  /** Group commit (write-queue.ts): committed with the other writes of this turn, then settled. */
  queue(write: BatchWrite): void {
    this.#writes.add(write);
  }

  /** True while a batch waits for another connection's lock: a write queued now waits with it. */
  get waitingForLock(): boolean {
    return this.#writes.waitingForLock;
  }

  /** One transaction for the whole batch; throws (rolled back, nobody answered) when it cannot be committed. */
  readonly #commitBatch = (batch: readonly BatchWrite[]): void => {
    const outcomes = this.transaction(() =>
      batch.map((write) => {
        try {
          return write.apply();
        } catch (error) {
          // A deleted account fails its own update only; anything from the engine fails the batch (rolled back).
          if (!(error instanceof DomainError)) throw error;
          return error;
        }
      }),
    );
    for (const [index, write] of batch.entries()) {
      const outcome = outcomes[index];
      if (outcome instanceof DomainError) write.fail(outcome);
      else write.settle(outcome);
    }
  };

  /**
   * Writes a consistent copy of the whole database to `path` (overwriting it) while other connections keep reading and
   * writing, and resolves with the number of pages copied. One step, under one read snapshot: a copy made in several steps
   * starts over whenever another connection commits between two of them, so under steady writes it might never finish.
   * In WAL mode that snapshot blocks no writer.
   */
  async backup(path: string): Promise<number> {
    const deadline = Date.now() + this.#busyTimeoutMs;
    for (;;) {
      try {
        return await backup(this.#db, path, { rate: EVERY_PAGE });
      } catch (error) {
        // A snapshot is refused only for a moment (another connection resetting the WAL): waited out like any lock.
        if (!isBusy(error) || Date.now() >= deadline) throw translate(error);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  }

  ping(): Promise<void> {
    return this.run(() => {
      this.statement('SELECT 1').get();
    });
  }

  /** `release` runs once the connection is closed (a part's own handle on the database's files). */
  onClose(release: () => void): void {
    this.#onClose.push(release);
  }

  async close(): Promise<void> {
    // A stamp's caller may not be waiting for it: whatever is still queued is written (or given up on) before closing.
    await this.#writes.drained();
    if (this.#db.isOpen) this.#db.close();
    for (const release of this.#onClose) release();
  }
}
