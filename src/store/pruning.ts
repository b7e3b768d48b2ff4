// Deleting what has expired in bounded batches, on both engines: each batch is one short statement that returns nothing but
// its row count, so memory stays flat and no lock is held long, however much is due.
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Rows per DELETE: small enough that a batch holds SQLite's write lock for milliseconds, large enough to cost few round trips. */
export const PRUNE_BATCH_ROWS = 5000;

/**
 * Runs `deleteBatch(limit)` until a batch deletes fewer than `limit` rows, and answers the rows deleted in all. Between two
 * batches the event loop takes its turn: on SQLite a batch runs on it, so requests are answered in between.
 */
export async function deleteInBatches(deleteBatch: (limit: number) => Promise<number>, limit = PRUNE_BATCH_ROWS): Promise<number> {
  let deleted = 0;
  for (;;) {
    const rows = await deleteBatch(limit);
    deleted += rows;
    if (rows < limit) return deleted;
    await nextTurn();
  }
}
