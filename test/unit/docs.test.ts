// Keeps docs/api.md honest: every failure code the source can produce is documented there.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const ROOT = join(import.meta.dirname, '../..');
const CODE_SITES = /(?:new DomainError\(\s*'[a-z_]+',|new HttpError\(\s*\d+,|unauthenticated\(|\bcode: )\s*'([a-z]+(?:_[a-z]+)*)'/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

test('docs/api.md documents every error code the source raises', () => {
  const codes = new Set<string>();
  for (const file of sourceFiles(join(ROOT, 'src'))) {
    for (const match of readFileSync(file, 'utf8').matchAll(CODE_SITES)) codes.add(match[1]!);
  }
  assert.ok(codes.size >= 25, `found only ${codes.size} codes in src/: the pattern that finds them has drifted`);
  const docs = readFileSync(join(ROOT, 'docs/api.md'), 'utf8');
  const missing = [...codes].filter((code) => !docs.includes(`\`${code}\``)).sort();
  assert.deepEqual(missing, [], `codes raised in src/ but not documented in docs/api.md: ${missing.join(', ')}`);
});

test('the README links docs/api.md', () => {
  assert.match(readFileSync(join(ROOT, 'README.md'), 'utf8'), /\]\(docs\/api\.md\)/);
});
