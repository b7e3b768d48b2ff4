// What a row is to every engine part, and how each engine's driver hands back the values the concerns' row mappers read: one
// mapper per record (accounts/account-rows.ts, ...) serves both engines, given the engine's Values.

export type Row = Record<string, unknown>;

/** How an engine's driver gives back the kinds of value whose shape differs between engines. */
export interface Values {
  /** A timestamp, as the API shows it (ISO 8601, UTC). */
  time(value: unknown): string;
  timeOrNull(value: unknown): string | null;
  /** A boolean column (SQLite: 0 or 1). */
  flag(value: unknown): boolean;
  /** A list of text (SQLite: JSON text; PostgreSQL: an array). */
  list(value: unknown): string[] | null;
}

export function textOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}
