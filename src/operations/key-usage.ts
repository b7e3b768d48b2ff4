// Usage per key, the one implementation the admin API (and the console) share: a key's last 30 days, and pruning past retention.
import { KEY_USAGE_DAYS_SHOWN, utcDayBefore } from '../domain/key-usage.ts';
import type { KeyUsage, KeyUsageStore } from '../store/store.ts';
import { checkKeyId } from './keys.ts';

export interface ReadKeyUsageInput {
  readonly username: string;
  readonly keyId: string;
  /** The clock, for tests. */
  readonly now?: number;
}

/** Today (UTC) and the days before it, KEY_USAGE_DAYS_SHOWN in all; days without a request are left out. */
export async function readKeyUsage(store: KeyUsageStore, input: ReadKeyUsageInput): Promise<KeyUsage> {
  const since = utcDayBefore(input.now ?? Date.now(), KEY_USAGE_DAYS_SHOWN - 1);
  return store.readKeyUsage(input.username, checkKeyId(input.keyId), since);
}

/** Deletes the days more than `retentionDays` before today (UTC), and addresses not seen since; resolves with the rows deleted. */
export async function pruneKeyUsage(store: KeyUsageStore, retentionDays: number, now = Date.now()): Promise<number> {
  return store.pruneKeyUsage(utcDayBefore(now, retentionDays));
}
