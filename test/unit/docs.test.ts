// Keeps docs/api.md honest: every failure code the source can produce is documented there.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
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

// A path in backticks or a relative link, to a file of the kinds this repository holds.
const NAMED_FILE = /`((?:[\w.-]+\/)*[\w.-]+\.(?:ts|js|md|json|sql|yaml|yml|service|svg|sh))`|\]\((?!https?:|#|mailto:)([^)#\s]+)(?:#[^)]*)?\)/g;

test('the docs name no file that is not in the repository', () => {
  const missing: string[] = [];
  for (const doc of ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)]) {
    const text = readFileSync(join(ROOT, doc), 'utf8');
    for (const match of text.matchAll(NAMED_FILE)) {
      const named = (match[1] ?? match[2])!;
      // Relative links resolve against the document; bare paths in backticks are from the repository's root.
      const candidates = match[2] !== undefined ? [join(ROOT, doc, '..', named)] : [join(ROOT, named), join(ROOT, doc, '..', named)];
      if (!named.includes('/') && match[1] !== undefined) continue; // a bare file name (`package.json`) names no place
      if (!candidates.some((path) => existsSync(path))) missing.push(`${doc}: ${named}`);
    }
  }
  assert.deepEqual(missing, [], `files named in the docs but not in the repository:\n${missing.join('\n')}`);
});

test("docs/api.md opens by saying request bodies are form-encoded, JSON accepted", () => {
  const opening = readFileSync(join(ROOT, 'docs/api.md'), 'utf8').split('\n## ')[0]!;
  assert.match(opening, /form-encoded/);
  assert.match(opening, /JSON/);
});

test('the README says how long the suite takes, how to run one file, and what the engine warnings mean', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  assert.match(readme, /The whole suite takes about \w+ minutes/);
  assert.match(readme, /npx node --test test\/[\w/.-]+\.test\.ts/);
  assert.match(readme, /EBADENGINE/);
});
