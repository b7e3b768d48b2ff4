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
