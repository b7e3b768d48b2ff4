// The PostgreSQL engine handle the row modules take: one statement on a pooled connection, or within the caller's transaction.
// Its own module so the row modules (audit, webhooks) share it without importing each other.

export type Row = Record<string, unknown>;
export type Query = (text: string, values?: readonly unknown[]) => Promise<Row[]>;
