// Usage per key: each answer to a proven key counted in memory (one Map lookup and an increment), written to the store in
// batches off the request path, every KEY_USAGE_FLUSH_MS, at each UTC midnight and at shutdown (docs/operations.md, Usage per key).
import { isDomainError } from '../../domain/errors.ts';
import { KEY_USAGE_ADDRESSES, KEY_USAGE_OUTCOMES, nextUtcMidnight, outcomeIndex, utcDay } from '../../domain/key-usage.ts';
import type { KeyUsageAddress, KeyUsageBatch, KeyUsageCount, KeyUsageStore } from '../../store/store.ts';

/** Keys per transaction: a flush of many keys is several short transactions, not one that holds SQLite's lock for long. */
const KEYS_PER_BATCH = 500;

/** A timer may fire a millisecond early: the midnight flush waits this much past midnight, so it falls on the new day. */
const MIDNIGHT_MARGIN_MS = 5;

/** One key's answers since the last flush. */
interface Tally {
  /** Per outcome, in KEY_USAGE_OUTCOMES' order. */
  readonly counts: number[];
  /** The address of its latest answer: seen until the flush. */
  lastAddress: string | undefined;
  /** Earlier addresses, oldest first, each with when it was last seen (the moment another took its place). */
  readonly earlier: Map<string, number>;
}

export interface KeyUsageCounterOptions {
  readonly store: KeyUsageStore;
  readonly flushIntervalMs: number;
  readonly log: { warn(fields: object, message: string): void };
  readonly now?: () => number;
}

export class KeyUsageCounter {
  readonly #store: KeyUsageStore;
  readonly #intervalMs: number;
  readonly #log: KeyUsageCounterOptions['log'];
  readonly #now: () => number;
  #tallies = new Map<string, Tally>();
  /** The UTC day every answer of this window is counted on: a window never crosses midnight (the timer ends it there). */
  #day: string;
  /** What a failed write left, added to the next flush. */
  #unsent: KeyUsageBatch = { counts: [], addresses: [] };
  #writing: Promise<void> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(options: KeyUsageCounterOptions) {
    this.#store = options.store;
    this.#intervalMs = options.flushIntervalMs;
    this.#log = options.log;
    this.#now = options.now ?? Date.now;
    this.#day = utcDay(this.#now());
  }

  /** The per-answer step (pipeline.ts): no I/O, no clock unless the key's address changed. */
  count(keyId: string, status: number, address: string | undefined): void {
    let tally = this.#tallies.get(keyId);
    if (tally === undefined) {
      tally = { counts: [0, 0, 0, 0, 0], lastAddress: undefined, earlier: new Map() };
      this.#tallies.set(keyId, tally);
    }
    tally.counts[outcomeIndex(status)]!++;
    if (address !== tally.lastAddress && address !== undefined) moveTo(tally, address, this.#now());
  }

  /** Flushes every KEY_USAGE_FLUSH_MS and at each UTC midnight, on a timer that never keeps the process alive. */
  start(): void {
    if (this.#stopped || this.#timer !== undefined) return;
    const now = this.#now();
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.flush();
      this.start();
    }, Math.min(this.#intervalMs, nextUtcMidnight(now) - now + MIDNIGHT_MARGIN_MS));
    this.#timer.unref();
  }

  /** Writes what was counted so far; resolves once written or given up on (logged, and kept for the next flush). */
  flush(): Promise<void> {
    const now = this.#now();
    const taken = this.#take(now);
    this.#writing = this.#writing.then(() => this.#write(taken));
    return this.#writing;
  }

  /** At shutdown, once the last answer is sent: the last flush. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.flush();
  }

  #take(now: number): KeyUsageBatch {
    const tallies = this.#tallies;
    const day = this.#day;
    this.#tallies = new Map();
    this.#day = utcDay(now);
    const counts: KeyUsageCount[] = [];
    const addresses: KeyUsageAddress[] = [];
    for (const [keyId, tally] of tallies) {
      tally.counts.forEach((count, index) => {
        if (count > 0) counts.push({ keyId, day, outcome: KEY_USAGE_OUTCOMES[index]!, count });
      });
      for (const [address, seen] of tally.earlier) if (address !== tally.lastAddress) addresses.push({ keyId, address, lastSeen: new Date(seen) });
      if (tally.lastAddress !== undefined) addresses.push({ keyId, address: tally.lastAddress, lastSeen: new Date(now) });
    }
    return { counts, addresses };
  }

  async #write(taken: KeyUsageBatch): Promise<void> {
    const all = merged(this.#unsent, taken);
    this.#unsent = { counts: [], addresses: [] };
    const batches = inBatches(all);
    for (const [index, batch] of batches.entries()) {
      try {
        await this.#store.recordKeyUsage(batch);
      } catch (error) {
        // Kept and added to the next flush: a batch is one transaction, so nothing of it was counted.
        this.#unsent = batches.slice(index).reduce(merged, { counts: [], addresses: [] });
        if (!(isDomainError(error) && error.kind === 'unavailable')) this.#log.warn({ err: error }, 'could not record key usage; kept for the next flush');
        return;
      }
    }
  }
}

function moveTo(tally: Tally, address: string, now: number): void {
  const previous = tally.lastAddress;
  tally.lastAddress = address;
  if (previous === undefined) return;
  tally.earlier.delete(previous);
  tally.earlier.set(previous, now);
  if (tally.earlier.size > KEY_USAGE_ADDRESSES) tally.earlier.delete(tally.earlier.keys().next().value!);
}

/** Counts of the same key, day and outcome added; of an address, the later time kept. */
function merged(a: KeyUsageBatch, b: KeyUsageBatch): KeyUsageBatch {
  if (a.counts.length === 0 && a.addresses.length === 0) return b;
  const counts = new Map<string, KeyUsageCount>();
  for (const row of [...a.counts, ...b.counts]) {
    const id = `${row.keyId} ${row.day} ${row.outcome}`;
    const before = counts.get(id);
    counts.set(id, before === undefined ? row : { ...row, count: before.count + row.count });
  }
  const addresses = new Map<string, KeyUsageAddress>();
  for (const row of [...a.addresses, ...b.addresses]) {
    const id = `${row.keyId} ${row.address}`;
    const before = addresses.get(id);
    if (before === undefined || before.lastSeen < row.lastSeen) addresses.set(id, row);
  }
  return { counts: [...counts.values()], addresses: [...addresses.values()] };
}

/** At most KEYS_PER_BATCH keys each, a key's rows all in one batch. */
function inBatches(batch: KeyUsageBatch): KeyUsageBatch[] {
  const keys = [...new Set([...batch.counts.map((row) => row.keyId), ...batch.addresses.map((row) => row.keyId)])];
  if (keys.length <= KEYS_PER_BATCH) return batch.counts.length + batch.addresses.length === 0 ? [] : [batch];
  const batchOf = new Map(keys.map((keyId, index) => [keyId, Math.floor(index / KEYS_PER_BATCH)]));
  const batches = Array.from({ length: Math.ceil(keys.length / KEYS_PER_BATCH) }, () => ({ counts: [] as KeyUsageCount[], addresses: [] as KeyUsageAddress[] }));
  for (const row of batch.counts) batches[batchOf.get(row.keyId)!]!.counts.push(row);
  for (const row of batch.addresses) batches[batchOf.get(row.keyId)!]!.addresses.push(row);
  return batches;
}
