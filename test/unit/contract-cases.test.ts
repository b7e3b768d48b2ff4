// Keeps the store contract one cases file per store concern: every concern folder under src/store/ (accounts/, keys/, ...)
// has its test/contract/<concern>-cases.ts, run by store-contract.ts, so a new concern cannot ship untested on either engine.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const ROOT = join(import.meta.dirname, '../..');
const STORE = join(ROOT, 'src/store');
const CONTRACT = join(ROOT, 'test/contract');

/** The engine folders hold connections, transactions and migrations, not a concern. */
const ENGINES = new Set(['sqlite', 'postgres']);

/** The folders of src/store/ that hold a concern's code (a folder left empty by a move is not one). */
function concernFolders(): string[] {
  return readdirSync(STORE, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !ENGINES.has(entry.name))
    .filter((entry) => readdirSync(join(STORE, entry.name)).some((name) => name.endsWith('.ts')))
    .map((entry) => entry.name)
    .sort();
}

/** `accounts` -> `account-cases.ts`, `admin-tokens` -> `admin-token-cases.ts`, `schema` -> `schema-cases.ts`. */
function casesFileFor(concern: string): string {
  return `${concern.replace(/s$/, '')}-cases.ts`;
}

test('src/store/ has concern folders to check (the guard is not looking at an empty tree)', () => {
  assert.ok(concernFolders().length >= 8, `only ${concernFolders().join(', ')} found under src/store/`);
});

test('every store concern folder has its cases file in test/contract/', () => {
  const missing = concernFolders().filter((concern) => !existsSync(join(CONTRACT, casesFileFor(concern))));
  assert.deepEqual(
    missing.map((concern) => `src/store/${concern}/ has no test/contract/${casesFileFor(concern)}`),
    [],
    'a store concern has no contract cases: add them, and run them from store-contract.ts',
  );
});

test('store-contract.ts runs every concern cases file', () => {
  const contract = readFileSync(join(CONTRACT, 'store-contract.ts'), 'utf8');
  const notRun = concernFolders()
    .map(casesFileFor)
    .filter((file) => existsSync(join(CONTRACT, file)) && !contract.includes(`from './${file}'`));
  assert.deepEqual(notRun, [], 'these cases files exist but store-contract.ts does not import them, so no engine runs them');
});
