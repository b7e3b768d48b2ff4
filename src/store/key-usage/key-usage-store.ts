// What the store keeps of each key's usage: a count per key, UTC day and outcome, and the key's last addresses; no SQL here.
import type { KeyUsageOutcome } from '../../domain/key-usage.ts';

export type { KeyUsageOutcome } from '../../domain/key-usage.ts';

/** Requests of one key on one UTC day with one outcome, counted by one process since its last flush. */
export interface KeyUsageCount {
  readonly keyId: string;
  /** YYYY-MM-DD, UTC. */
  readonly day: string;
  readonly outcome: KeyUsageOutcome;
  readonly count: number;
}

/** An address a key was used from, and when it was last seen. */
export interface KeyUsageAddress {
  readonly keyId: string;
  readonly address: string;
  readonly lastSeen: Date;
}

/** One flush of one process: each (key, day, outcome) at most once. */
export interface KeyUsageBatch {
  readonly counts: readonly KeyUsageCount[];
  readonly addresses: readonly KeyUsageAddress[];
}

/** One day of a key's requests, per outcome; a day without any is absent. */
export type KeyUsageDay = { readonly day: string } & { readonly [Outcome in KeyUsageOutcome]: number };

export interface KeyUsage {
  /** Oldest first. */
  readonly days: readonly KeyUsageDay[];
  /** Newest first, at most KEY_USAGE_ADDRESSES. */
  readonly addresses: readonly { readonly address: string; readonly lastSeen: string }[];
}

export interface KeyUsageStore {
  /**
   * Adds the batch's counts to those stored (any number of instances add up) and keeps each key's newest addresses, in one
   * transaction: all of it or nothing, so a failed batch can be sent again. Counts of a key deleted since are dropped.
   */
  recordKeyUsage(batch: KeyUsageBatch): Promise<void>;
  /** From `since` (YYYY-MM-DD) on. Fails with account_not_found, or key_not_found when the key is not that account's. */
  readKeyUsage(username: string, keyId: string, since: string): Promise<KeyUsage>;
  /** Deletes the days before `before` (YYYY-MM-DD) and the addresses last seen before it, in bounded batches; resolves with how many rows. */
  pruneKeyUsage(before: string): Promise<number>;
}
