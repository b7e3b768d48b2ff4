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
const CONCERNS = ['accounts', 'admin-tokens', 'audit', 'console-sessions', 'credentials', 'idempotency', 'keys', 'key-usage', 'schema', 'webhooks'];
const SQL = /\b(SELECT|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+TABLE)\b/;
const ENGINE_IMPORT = /from\s+'[^']*\/(sqlite|postgres)\/[^']*'|from\s+'(node:sqlite|pg)'/;

// The tables each engine's migrations create (and the runner's own), so a new table is guarded as soon as it exists.
function tablesOf(engine: 'sqlite' | 'postgres'): string[] {
  const dir = join(STORE, engine, 'migrations');
  return readdirSync(dir)
    .filter((file) => file.endsWith('.sql'))
    .flatMap((file) => [...readFileSync(join(dir, file), 'utf8').matchAll(/CREATE TABLE (?:IF NOT EXISTS )?(\w+)/gi)])
    .map((match) => match[1]!.toLowerCase())
    .concat('schema_migrations');
}
const TABLES = { sqlite: tablesOf('sqlite'), postgres: tablesOf('postgres') };

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

test('the table finder sees a table named by SQL, and passes prose and engine statements', () => {
  for (const tables of Object.values(TABLES)) {
    assert.ok(tables.includes('accounts') && tables.includes('api_keys') && tables.includes('webhook_events'), `tables read from the migrations: ${tables.join(', ')}`);
    assert.deepEqual(tablesNamed("statement('SELECT id, username FROM accounts WHERE id = ?')", tables), ['accounts']);
    assert.deepEqual(tablesNamed('`UPDATE api_keys SET last_used_at = ?` and INSERT INTO deployment', tables), ['api_keys', 'deployment']);
    assert.deepEqual(tablesNamed("// accounts from the accounts part\nexec('PRAGMA data_version'); query('SELECT 1')", tables), []);
  }
});

for (const engine of ['sqlite', 'postgres'] as const) {
  test(`every concern holds its ${engine}.ts part beside its interface, and ${engine}/ keeps only the engine, naming no table`, () => {
    const missing = CONCERNS.filter((concern) => !readdirSync(join(STORE, concern)).includes(`${engine}.ts`));
    assert.deepEqual(missing, [], `concerns without a ${engine}.ts part`);
    // migrate.ts keeps schema_migrations, the migration runner's own bookkeeping.
    const naming = readdirSync(join(STORE, engine))
      .filter((file) => file.endsWith('.ts') && file !== 'migrate.ts')
      .flatMap((file) => tablesNamed(readFileSync(join(STORE, engine, file), 'utf8'), TABLES[engine]).map((table) => `${engine}/${file} names ${table}`));
    assert.deepEqual(naming, [], `table SQL belongs in its concern folder (accounts/${engine}.ts, ...), not in the engine`);
  });
}
