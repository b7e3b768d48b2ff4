// Keeps docs/api.md honest: every failure code the source can produce is documented there.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ENVIRONMENT_VARIABLES } from '../../src/config.ts';

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
  // The figure is measured on an idle machine; a reader on a busy one should not think a slower run is a hang.
  assert.match(readme, /The whole suite takes about \w+ minutes on a 2-core machine: \d+ minutes with both cores kept busy/);
  assert.match(readme, /npx node --test test\/[\w/.-]+\.test\.ts/);
  assert.match(readme, /EBADENGINE/);
});

/** The rows of every `| Variable | Default | ... |` table in a markdown text: each row's variable and default cell. */
function variableTables(markdown: string): { variable: string; fallback: string }[][] {
  const tables = markdown.split(/\n(?=\| Variable \| Default \|)/).slice(1);
  return tables.map((table) => {
    const lines = table.split('\n').slice(2);
    const end = lines.findIndex((line) => !line.startsWith('|'));
    return lines
      .slice(0, end === -1 ? undefined : end)
      .map((line) => {
        const [variable = '', fallback = ''] = line.split(' | ').map((cell) => cell.replace(/^\| /, '').trim());
        return { variable, fallback };
      });
  });
}

test("docs/operations.md's configuration table names exactly the environment variables src/config.ts reads", () => {
  const operations = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
  const section = operations.split('\n## Configuration\n')[1]?.split('\n## ')[0];
  assert.ok(section, 'docs/operations.md has no "## Configuration" section');
  const tables = variableTables(section);
  assert.equal(tables.length, 1, 'the configuration section should hold one table of variables');
  const documented = tables[0]!.map((row) => row.variable);
  const malformed = documented.filter((cell) => !/^`[A-Z][A-Z0-9_]*`$/.test(cell));
  assert.deepEqual(malformed, [], 'each row names one variable, in backticks');
  const names = documented.map((cell) => cell.slice(1, -1));
  assert.equal(new Set(names).size, names.length, 'the configuration table lists a variable twice');
  const read = new Set<string>(ENVIRONMENT_VARIABLES);
  const notRead = names.filter((name) => !read.has(name)).sort();
  const undocumented = [...read].filter((name) => !names.includes(name)).sort();
  assert.deepEqual(notRead, [], `documented in docs/operations.md's configuration table but not read by src/config.ts: ${notRead.join(', ')}`);
  assert.deepEqual(undocumented, [], `read by src/config.ts but missing from docs/operations.md's configuration table: ${undocumented.join(', ')}`);
});

test('any other table of variables in the docs gives the same default as the configuration table', () => {
  const operations = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
  const [before, rest = ''] = operations.split('\n## Configuration\n');
  const [section = '', ...after] = rest.split('\n## ');
  const defaults = new Map(variableTables(section)[0]!.map((row) => [row.variable, row.fallback]));
  const others = [
    ['docs/operations.md', `${before}\n## ${after.join('\n## ')}`],
    ...['README.md', 'docs/deploy.md', 'docs/api.md'].map((file) => [file, readFileSync(join(ROOT, file), 'utf8')]),
  ] as const;
  const disagreeing = others.flatMap(([file, text]) =>
    variableTables(text)
      .flat()
      .filter((row) => defaults.has(row.variable) && defaults.get(row.variable) !== row.fallback)
      .map((row) => `${file}: ${row.variable} ${row.fallback} (configuration table: ${defaults.get(row.variable)})`),
  );
  assert.deepEqual(disagreeing, [], `defaults that disagree with docs/operations.md's configuration table:\n${disagreeing.join('\n')}`);
});
