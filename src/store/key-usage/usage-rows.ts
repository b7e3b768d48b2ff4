// Reading usage rows back, the same for both engines: rows of (day, outcome, count) as one entry per day.
import { KEY_USAGE_OUTCOMES } from '../../domain/key-usage.ts';
import type { Row } from '../rows.ts';
import type { KeyUsageDay } from './key-usage-store.ts';

/** Rows in day order; every outcome present in each day (0 when none), days without a request absent. */
export function daysOf(rows: readonly Row[]): KeyUsageDay[] {
  const days = new Map<string, Record<string, number | string>>();
  for (const row of rows) {
    const day = String(row.day);
    let entry = days.get(day);
    if (entry === undefined) {
      entry = { day };
      for (const outcome of KEY_USAGE_OUTCOMES) entry[outcome] = 0;
      days.set(day, entry);
    }
    entry[String(row.outcome)] = Number(row.count);
  }
  return [...days.values()] as unknown as KeyUsageDay[];
}
