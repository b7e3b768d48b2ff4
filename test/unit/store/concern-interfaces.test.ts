// The store by concern: each concern's folder holds its interface and types with no SQL and no engine, and authentication
// asks for no more than the credentials it reads; the engine folders hold connections and transactions, and name no table.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { authenticator } from '../../../src/http/auth/authenticate.ts';
import type { RateBudgets } from '../../../src/http/limits/rate-limits.ts';
import type { CredentialStore } from '../../../src/store/store.ts';

const STORE = join(import.meta.dirname, '../../../src/store');
const CONCERNS = ['accounts', 'admin-tokens', 'audit', 'credentials', 'idempotency', 'keys', 'schema', 'webhooks'];
// Concerns whose SQL already sits beside their interface, one file per engine.
const WITH_ENGINES = ['admin-tokens', 'audit', 'idempotency', 'webhooks'];
const SQL = /\b(SELECT|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+TABLE)\b/;
const ENGINE_IMPORT = /from\s+'[^']*\/(sqlite|postgres)\/[^']*'|from\s+'(node:sqlite|pg)'/;

const SQLITE_TABLES = readdirSync(join(STORE, 'sqlite/migrations'))
  .filter((file) => file.endsWith('.sql'))
  .flatMap((file) => [...readFileSync(join(STORE, 'sqlite/migrations', file), 'utf8').matchAll(/CREATE TABLE (?:IF NOT EXISTS )?(\w+)/g)])
  .map((match) => match[1]!)
  .concat('schema_migrations');

/** Tables named by SQL in `source` (a keyword, then the table: FROM accounts, INTO api_keys, UPDATE deployment, ...). */
export function tablesNamed(source: string, tables: readonly string[]): string[] {
  const named = [...source.matchAll(/\b(?:FROM|INTO|UPDATE|JOIN|TABLE|EXISTS)\s+(\w+)/g)].map((match) => match[1]!);
  return [...new Set(named.filter((name) => tables.includes(name)))];
}

export function interfaceFaults(name: string, source: string): string[] {
  const faults: string[] = [];
  if (SQL.test(source)) faults.push(`${name} holds SQL`);
  if (ENGINE_IMPORT.test(source)) faults.push(`${name} imports an engine`);
  return faults;
}

test('the fault finder sees SQL and an engine import, and passes a plain interface', () => {
  assert.deepEqual(interfaceFaults('x.ts', "const q = 'SELECT 1';"), ['x.ts holds SQL']);
  assert.deepEqual(interfaceFaults('x.ts', "import { db } from '../sqlite/sqlite-store.ts';"), ['x.ts imports an engine']);
  assert.deepEqual(interfaceFaults('x.ts', 'export interface AccountStore { findAccount(username: string): Promise<unknown>; }'), []);
});

test('every concern folder holds its interface, with no SQL and no engine', () => {
  const faults: string[] = [];
  for (const concern of CONCERNS) {
    const files = readdirSync(join(STORE, concern)).filter((file) => file.endsWith('-store.ts'));
    if (files.length === 0) faults.push(`${concern}/ has no *-store.ts interface`);
    for (const file of files) faults.push(...interfaceFaults(`${concern}/${file}`, readFileSync(join(STORE, concern, file), 'utf8')));
  }
  assert.deepEqual(faults, []);
});

test('authentication is built on a CredentialStore alone: the two methods it reads', () => {
  const credentials: CredentialStore = { findCredential: () => null, touchKey: async () => undefined };
  const budgets = { spendAuthAttempt: () => null, refundAuthAttempt: () => undefined, charge: () => undefined } as unknown as RateBudgets;
  const authenticate = authenticator(budgets, { store: credentials, environment: 'live', realm: 'test', touchIntervalMs: 60_000 });
  assert.equal(typeof authenticate, 'function');
});

test('a concern whose SQL has moved holds it beside its interface, one file per engine, and the engine folders no longer do', () => {
  for (const concern of WITH_ENGINES) {
    const files = readdirSync(join(STORE, concern));
    assert.ok(files.includes('sqlite.ts') && files.includes('postgres.ts'), `${concern}/ lacks sqlite.ts or postgres.ts: ${files.join(', ')}`);
  }
  const leftBehind = ['sqlite', 'postgres'].flatMap((engine) =>
    readdirSync(join(STORE, engine)).filter((file) => /^(audit-rows|idempotency-keys|webhook-rows)\.ts$/.test(file)).map((file) => `${engine}/${file}`),
  );
  assert.deepEqual(leftBehind, [], 'a concern moved out of the engine folders is back in one');
});

test('the table finder sees a table named by SQL, and passes prose and engine statements', () => {
  assert.deepEqual(tablesNamed("statement('SELECT id, username FROM accounts WHERE id = ?')", SQLITE_TABLES), ['accounts']);
  assert.deepEqual(tablesNamed('`UPDATE api_keys SET last_used_at = ?` and INSERT INTO deployment', SQLITE_TABLES), ['api_keys', 'deployment']);
  assert.deepEqual(tablesNamed("// accounts from the accounts part\nexec('PRAGMA data_version'); statement('SELECT 1')", SQLITE_TABLES), []);
  assert.ok(SQLITE_TABLES.includes('accounts') && SQLITE_TABLES.includes('webhook_events'), `tables read from the migrations: ${SQLITE_TABLES.join(', ')}`);
});

test('every concern holds its SQLite part beside its interface, and sqlite/ keeps only the engine, naming no table', () => {
  const missing = CONCERNS.filter((concern) => !readdirSync(join(STORE, concern)).includes('sqlite.ts'));
  assert.deepEqual(missing, [], 'concerns without a sqlite.ts part');
  const naming = readdirSync(join(STORE, 'sqlite'))
    .filter((file) => file.endsWith('.ts'))
    .flatMap((file) => tablesNamed(readFileSync(join(STORE, 'sqlite', file), 'utf8'), SQLITE_TABLES).map((table) => `sqlite/${file} names ${table}`));
  assert.deepEqual(naming, [], 'table SQL belongs in its concern folder (accounts/sqlite.ts, ...), not in the engine');
});
