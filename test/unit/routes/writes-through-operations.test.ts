// One place per rule: a public route changes an account through operations/, as the CLI and the admin API do, never by
// calling a store write itself, so a new rule on a change is written once.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const ROUTES = join(import.meta.dirname, '../../../src/routes');
// The store's writes by their verbs; reads (find, list) and the pipeline's own steps are not changes of an account.
const STORE_WRITE = /\bstore\.(update|set|create|delete|revoke|roll|add|remove)\w*\(/g;

export function storeWritesIn(source: string): string[] {
  return [...source.matchAll(STORE_WRITE)].map((match) => match[0]);
}

test('the write detector sees a store write and leaves reads alone', () => {
  assert.deepEqual(storeWritesIn('await store.updateName(id, name); store.findAccount(u); store.setPremium(u, true)'), ['store.updateName(', 'store.setPremium(']);
});

test('no public route calls a store write: every change goes through operations/', () => {
  const offenders: string[] = [];
  for (const entry of readdirSync(ROUTES, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const path = join(entry.parentPath, entry.name);
    for (const call of storeWritesIn(readFileSync(path, 'utf8'))) offenders.push(`${path.slice(ROUTES.length + 1)}: ${call}`);
  }
  assert.deepEqual(offenders, [], `routes that change an account without operations/: ${offenders.join(', ')}`);
});
