// The PostgreSQL engine handle every postgres.ts part takes: one statement on a pooled connection, or within the caller's
// transaction (postgres-engine.ts); and the row readers they share. Its own module so the parts share it without importing each other.

export type Row = Record<string, unknown>;
export type Query = (text: string, values?: readonly unknown[]) => Promise<Row[]>;

/** A timestamp as the API shows it (ISO 8601, UTC), whether the driver gave a Date or text. */
export function iso(value: unknown): string {
  return (value instanceof Date ? value : new Date(String(value))).toISOString();
}

export function isoOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : iso(value);
}

export function orNull(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}
