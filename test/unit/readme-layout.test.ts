// Keeps the README's Layout section true: it names every folder under src/ (and the repository's and test/'s top folders),
// and nothing that is not there. The tree is read at run time, so a moved folder fails here until its README line moves too.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const ROOT = join(import.meta.dirname, '../..');

/** The paths the Layout block names (its first word on each line that is not indented), from the repository's root. */
function layoutEntries(readme: string): string[] {
  const section = readme.split('\n## Layout\n')[1]?.split('\n## ')[0];
  assert.ok(section !== undefined, 'README.md has no "## Layout" section');
  const block = /^```text\n([\s\S]*?)^```$/m.exec(section)?.[1];
  assert.ok(block !== undefined, "README.md's Layout section has no ```text block");
  // An indented line carries on the description above it; a blank line only spaces groups apart.
  return block
    .split('\n')
    .filter((line) => line.trim() !== '' && !/^\s/.test(line))
    .map((line) => line.split(/\s+/)[0]!);
}

/** Folders git would carry: not hidden, not ignored at the root by .gitignore (node_modules/, data/, ...), holding a file. */
function ignoredAtRoot(): Set<string> {
  const lines = readFileSync(join(ROOT, '.gitignore'), 'utf8').split('\n');
  return new Set(lines.filter((line) => /^[\w.-]+(?:\/[\w.-]+)*\/$/.test(line)).map((line) => line.slice(0, -1)));
}

function holdsAFile(dir: string): boolean {
  return readdirSync(dir, { withFileTypes: true }).some((entry) => entry.isFile() || (entry.isDirectory() && holdsAFile(join(dir, entry.name))));
}

/** The folders below `dir` (a path from the root, '' for the root itself), `depth` levels down, as `a/b/`. */
function foldersUnder(dir: string, depth: number, ignored: Set<string>): string[] {
  if (depth === 0) return [];
  return readdirSync(join(ROOT, dir), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.'))
    .map((entry) => `${dir}${entry.name}`)
    // A folder with no file in it is a leftover git does not carry (a move leaves one behind), not part of the layout.
    .filter((path) => !ignored.has(path) && holdsAFile(join(ROOT, path)))
    .flatMap((path) => [`${path}/`, ...foldersUnder(`${path}/`, depth - 1, ignored)]);
}

/**
 * What the block must name, each way: every folder under src/ however deep and the files at its top (the entry points),
 * the repository's top folders, and test/'s. Deeper folders elsewhere (test/unit/ mirrors src/) are the block's to pick.
 */
function expectedEntries(): string[] {
  const ignored = ignoredAtRoot();
  const srcFiles = readdirSync(join(ROOT, 'src'), { withFileTypes: true }).filter((entry) => entry.isFile()).map((entry) => `src/${entry.name}`);
  return [...foldersUnder('', 1, ignored), ...foldersUnder('src/', Infinity, ignored), ...srcFiles, ...foldersUnder('test/', 1, ignored)];
}

/** Does `path` (a folder when it ends in a slash) exist in the repository? */
function exists(path: string): boolean {
  if (!existsSync(join(ROOT, path))) return false;
  return path.endsWith('/') === statSync(join(ROOT, path)).isDirectory();
}

test("the README's Layout names every folder under src/, the files at src/'s top, and the repository's and test/'s folders", () => {
  const named = new Set(layoutEntries(readFileSync(join(ROOT, 'README.md'), 'utf8')));
  const missing = expectedEntries().filter((path) => !named.has(path)).sort();
  assert.deepEqual(missing, [], `in the repository but not in README.md's Layout section (add a line saying what its files share):\n${missing.join('\n')}`);
});

test("the README's Layout names nothing that is not in the repository", () => {
  const entries = layoutEntries(readFileSync(join(ROOT, 'README.md'), 'utf8'));
  const absent = entries.filter((path) => !exists(path)).sort();
  assert.deepEqual(absent, [], `named in README.md's Layout section but not in the repository (moved or removed? a folder ends in /, a file does not):\n${absent.join('\n')}`);
});

test("the README's Layout names each path once, as a path from the repository's root", () => {
  const entries = layoutEntries(readFileSync(join(ROOT, 'README.md'), 'utf8'));
  const repeated = entries.filter((path, index) => entries.indexOf(path) !== index);
  assert.deepEqual(repeated, [], `named twice in README.md's Layout section: ${repeated.join(', ')}`);
  const malformed = entries.filter((path) => !/^[\w.-]+(?:\/[\w.-]+)*\/?$/.test(path));
  assert.deepEqual(malformed, [], `not a path from the repository's root in README.md's Layout section: ${malformed.join(', ')}`);
});

test("the README's glossary explains the house words", () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const glossary = readme.split('\n## Glossary\n')[1]?.split('\n## ')[0];
  assert.ok(glossary !== undefined, 'README.md has no "## Glossary" section');
  // The words the code's comments lean on most; each is defined in bold at the start of its entry.
  const defined = new Set([...glossary.matchAll(/^- \*\*([^*]+)\*\*/gm)].flatMap((match) => match[1]!.split(/,\s*/)));
  const undefinedWords = ['answer', 'turn', 'budget', 'facts', 'refusal'].filter((word) => !defined.has(word));
  assert.deepEqual(undefinedWords, [], `house words README.md's glossary does not define: ${undefinedWords.join(', ')}`);
});
