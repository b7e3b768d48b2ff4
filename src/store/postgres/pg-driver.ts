// node-postgres, loaded when a PostgreSQL store first needs it: a service on SQLite never loads it.
import { createRequire } from 'node:module';
import type pg from 'pg';

let driver: typeof pg | undefined;

/**
 * The `pg` module, required on first use. `openStore` is synchronous, so this is a require (pg is CommonJS, and its ESM entry
 * re-exports the same objects), not a dynamic import. Loaded at start-up it cost every SQLite server its load time
 * and memory (docs/operations.md#performance-and-memory).
 */
export function pgDriver(): typeof pg {
  driver ??= createRequire(import.meta.url)('pg') as typeof pg;
  return driver;
}
