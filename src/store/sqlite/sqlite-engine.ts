// One SQLite connection (node:sqlite, WAL) and what every concern runs on: prepared statements, lock waits on timers,
// transactions, group commit, backup. It names no table: the SQL lives beside each concern's interface.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { backup, DatabaseSync, type StatementSync } from 'node:sqlite';
import { DomainError } from '../../domain/errors.ts';
import { retryWhileLocked } from './lock-wait.ts';
import { isBusy, translate } from './sqlite-errors.ts';
import { WriteQueue, type QueuedWrite } from './write-queue.ts';
import { textOrNull, type Values } from '../rows.ts';

export type { Row } from '../rows.ts';
export type Prepare = (sql: string) => StatementSync;

/** node:sqlite's values: times are ISO text as written, booleans 0 or 1, lists JSON text. */
export const SQLITE_VALUES: Values = {
  time: String,
  timeOrNull: textOrNull,
  flag: (value) => Number(value) === 1,
  list: (value) => (value === null || value === undefined ? null : (JSON.parse(String(value)) as string[])),
};

export interface SqliteEngineOptions {
  readonly path: string;
  /** FULL survives power loss; NORMAL survives a process crash only. */
  readonly synchronous: 'full' | 'normal';
  /** How long a statement waits, on timers (lock-wait.ts), for another connection's lock before store_busy. */
  readonly busyTimeoutMs: number;
}

export interface BatchWrite<T = unknown> extends QueuedWrite {
  /** Inside the batch's transaction; a DomainError fails this write alone. */
  apply(): T;
  /** After commit, with apply's result: only now may a cache hold its rows. */
  settle(outcome: T): void;
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Switching to WAL takes an exclusive lock; two processes opening a new database at once can deadlock on it and get
 * SQLITE_BUSY without the busy handler, so this retries synchronously within the busy timeout.
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

  /** After every part is built: SQLite's busy handler would sleep on the event loop, so from now on locks are waited on timers. */
  opened(): void {
    this.#db.exec('PRAGMA busy_timeout = 0');
  }

  /** Parsing is most of the cost of a small query. */
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

  queue(write: BatchWrite): void {
    this.#writes.add(write);
  }

  get waitingForLock(): boolean {
    return this.#writes.waitingForLock;
  }

  /** Throws (rolled back, nobody answered) when the batch cannot be committed. */
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
   * A consistent copy of the database to `path`, resolving with the pages copied. One step under one read snapshot (which in
   * WAL blocks no writer): a multi-step copy restarts on every commit and might never finish under steady writes.
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
