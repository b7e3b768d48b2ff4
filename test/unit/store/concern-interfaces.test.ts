// The store by concern: each concern's folder holds its interface and types with no SQL and no engine, and authentication
// asks for no more than the credentials it reads.
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

// The tables the schema creates, read from the migrations, so a new table is guarded as soon as it exists.
function tablesOf(migrationsDir: string): string[] {
  const sql = readdirSync(migrationsDir).map((file) => readFileSync(join(migrationsDir, file), 'utf8')).join('\n');
  return [...new Set([...sql.matchAll(/CREATE TABLE(?: IF NOT EXISTS)?\s+(\w+)/gi)].map((match) => match[1]!.toLowerCase()))];
}

/** The tables a source file names as SQL does (after FROM, JOIN, INTO, UPDATE, TABLE), among `tables`. */
export function tablesNamed(source: string, tables: readonly string[]): string[] {
  return tables.filter((table) => new RegExp(`\\b(FROM|JOIN|INTO|UPDATE|TABLE)\\s+${table}\\b`, 'i').test(source));
}

const PG_TABLES = tablesOf(join(STORE, 'postgres/migrations'));

test('the table finder sees a planted SELECT from accounts, and passes engine machinery', () => {
  assert.ok(PG_TABLES.includes('accounts') && PG_TABLES.includes('api_keys'), `tables read from the migrations: ${PG_TABLES.join(', ')}`);
  assert.deepEqual(tablesNamed("await this.query('SELECT id, username FROM accounts WHERE id = $1');", PG_TABLES), ['accounts']);
  assert.deepEqual(tablesNamed("await this.query('SELECT 1'); // one part per concern: accounts/postgres.ts", PG_TABLES), []);
});

test('every concern has its PostgreSQL part beside its interface, and the PostgreSQL engine folder names no table', () => {
  const missing = CONCERNS.filter((concern) => !readdirSync(join(STORE, concern)).includes('postgres.ts'));
  assert.deepEqual(missing, [], 'concerns without a postgres.ts');
  // migrate.ts keeps schema_migrations, the migration runner's own bookkeeping.
  const named = readdirSync(join(STORE, 'postgres'))
    .filter((file) => file.endsWith('.ts') && file !== 'migrate.ts')
    .flatMap((file) => tablesNamed(readFileSync(join(STORE, 'postgres', file), 'utf8'), PG_TABLES).map((table) => `postgres/${file} names ${table}`));
  assert.deepEqual(named, [], 'SQL on a table belongs in its concern folder, not in the engine');
});
