// The PostgreSQL engine handle every postgres.ts part takes: one statement on a pooled connection, or within the caller's
// transaction (postgres-engine.ts); and the row readers they share. Its own module so the parts share it without importing each other.

import { textOrNull, type Row, type Values } from '../rows.ts';

export type { Row } from '../rows.ts';
export type Query = (text: string, values?: readonly unknown[]) => Promise<Row[]>;

/** A timestamp as the API shows it (ISO 8601, UTC), whether the driver gave a Date or text. */
export function iso(value: unknown): string {
  return (value instanceof Date ? value : new Date(String(value))).toISOString();
}

export function isoOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : iso(value);
}

/** node-postgres's values: timestamps as Dates, booleans and text arrays as they are. */
export const POSTGRES_VALUES: Values = {
  time: iso,
  timeOrNull: isoOrNull,
  flag: (value) => value === true,
  list: (value) => (value === null || value === undefined ? null : (value as string[])),
};
