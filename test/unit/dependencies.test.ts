// Every package the service depends on at run time is imported by its code: a dependency nothing uses is only installed, audited and shipped.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const ROOT = join(import.meta.dirname, '../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : /\.(ts|js)$/.test(entry.name) ? [join(dir, entry.name)] : [],
  );
}

/**
 * The packages named by `from '...'`, `import('...')` and `require.resolve('...')` (files served from a package, as the
 * console serves htmx and Chart.js); a subpath such as 'ajv/dist/2020.js' counts for its package.
 */
function importedPackages(files: readonly string[]): Set<string> {
  const packages = new Set<string>();
  for (const file of files) {
    for (const match of readFileSync(file, 'utf8').matchAll(/(?:\bfrom|\bimport\(|\brequire\.resolve\()\s*'((?:@[\w.-]+\/)?[\w.-]+)(?:\/[^']*)?'/g)) packages.add(match[1]!);
  }
  return packages;
}

test('every run-time dependency in package.json is imported by src/ or bin/', () => {
  const { dependencies } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  const imported = importedPackages([...sourceFiles(join(ROOT, 'src')), ...sourceFiles(join(ROOT, 'bin'))]);
  assert.ok(imported.has('fastify'), 'the pattern that finds imports has drifted: it no longer sees fastify');
  const unused = Object.keys(dependencies).filter((name) => !imported.has(name));
  assert.deepEqual(unused, [], `dependencies nothing in src/ or bin/ imports (npm uninstall them): ${unused.join(', ')}`);
});
