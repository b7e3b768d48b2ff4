// The PostgreSQL engine handle the row modules take: one statement on a pooled connection, or within the caller's transaction.
// Its own module so the row modules (audit, webhooks) share it without importing each other.

export type Row = Record<string, unknown>;
export type Query = (text: string, values?: readonly unknown[]) => Promise<Row[]>;

/** A timestamp as the API shows it (ISO 8601, UTC), whether the driver gave a Date or text. */
export function iso(value: unknown): string {
  return (value instanceof Date ? value : new Date(String(value))).toISOString();
}

export function isoOrNull(value: unknown): string | null {
  return value === null ? null : iso(value);
}
