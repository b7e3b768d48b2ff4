// Keeps src/ comments notes, not lab notebooks: every performance trick is fenced (what it relies on, which test guards it,
// where its figures are), and the figures themselves live in docs/operations.md, not in comments.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { commentsOf } from '../../scripts/comment-share.ts';

const ROOT = join(import.meta.dirname, '../..');
const OPERATIONS = 'docs/operations.md';

/** The tricks named by hand; files found by what they use (fencedByUse) are added to these. */
const FENCED_FILES = [
  'src/http/wire/answer-headers.ts',
  'src/http/observability/request-log.ts',
  'src/http/observability/lazy-child-logger.ts',
  'src/http/turn-batch.ts',
  'src/store/sqlite/wal-index-header.ts',
  'src/store/credentials/credential-cache.ts',
  'src/http/observability/key-redaction.ts',
  'src/http/observability/metrics.ts',
];

/**
 * Files that lean on something fragile wherever they move: Fastify's private symbols, or the WAL-index read (the credential
 * lookup that makes one look per turn).
 */
const FENCED_BY_USE = [/fastify\/lib\/symbols\.js/, /WalIndexHeader\.open\(/];

/**
 * A figure that belongs in docs/operations.md: durations below a millisecond, instruction counts, percentages, measured
 * durations or sizes (`~12 ms`), ratios (`a third less`), and the tools that produce them. Configured values ("within 10 s", "8 s of lock") have no
 * `~` and stay.
 */
export const FIGURE =
  /\d[\d,.]*\s*(?:µs|us|ns)\b|\d[\d,.]*k?\s+instructions\b|\b\d+(?:\.\d+)?k\b|\d(?:\.\d+)?\s?%(?!\w)|~\s?\d[\d,.]*\s*(?:ms|s|MB)\b|\bcallgrind\b|\bmicro-?\s?benchmark|\bwrk -c\d|\bof CPU\b|\ba (?:third|quarter) (?:less|more)\b|\b\d+ times (?:quicker|faster|slower|cheaper)\b/i;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/** A comment's words without its markers (`//`, `/**`, ` * `), on one line. */
function prose(comment: string): string {
  return comment
    .split('\n')
    .map((line) => line.replace(/^\s*(?:\/\/+|\/\*+|\*\/|\*(?!\/))?/, '').replace(/\*\/\s*$/, ''))
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** GitHub's anchors for a markdown text's headings: lower case, punctuation dropped, spaces as hyphens. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const match of markdown.matchAll(/^#{1,6} (.+)$/gm)) {
    anchors.add(
      match[1]!
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    );
  }
  return anchors;
}

/**
 * What is wrong with a file's fence, or null when it has one: a comment saying `Performance trick.`, `Relies on:`, then
 * `Guarded by:` one or more existing test files, then `Figures: docs/operations.md#anchor` with an anchor that exists.
 */
export function fenceProblem(text: string, anchors: ReadonlySet<string>, exists: (path: string) => boolean): string | null {
  // Comments joined in order, so that a header of `//` lines (a comment each) reads as one.
  const all = commentsOf(text).map(prose).join(' ');
  const start = all.indexOf('Performance trick');
  if (start === -1) return 'no "Performance trick." header';
  const fence = all.slice(start, start + 800); // a fence is a few lines; what follows is other comments
  if (!/Relies on: \S/.test(fence)) return 'the fence does not say what it relies on ("Relies on: ...")';
  const parts = /Guarded by: (.+?)\. Figures: docs\/operations\.md#([\w-]+)/.exec(fence);
  if (parts === null) return 'the fence does not name its test and figures ("Guarded by: test/....test.ts. Figures: docs/operations.md#...")';
  const tests = parts[1]!.split(/,\s*(?:and\s+)?|\s+and\s+/);
  for (const path of tests) {
    if (!/^test\/\S+\.test\.ts$/.test(path)) return `"${path}" is not a test file's path`;
    if (!exists(path)) return `its guard ${path} does not exist`;
  }
  if (!anchors.has(parts[2]!)) return `${OPERATIONS}#${parts[2]} is not a heading of ${OPERATIONS}`;
  return null;
}

/** Comment lines holding a figure, as `line: text`. */
export function figuresIn(text: string): string[] {
  return commentsOf(text)
    .flatMap((comment) => comment.split('\n'))
    .filter((line) => FIGURE.test(line))
    .map((line) => line.trim());
}

const anchors = anchorsOf(readFileSync(join(ROOT, OPERATIONS), 'utf8'));
const sources = sourceFiles(join(ROOT, 'src')).map((path) => ({ path: relative(ROOT, path), text: readFileSync(path, 'utf8') }));
const inRepository = (path: string) => existsSync(join(ROOT, path));

test('every performance trick opens with a fence naming what it relies on, an existing test and an existing docs anchor', () => {
  const fenced = new Set(FENCED_FILES);
  for (const { path, text } of sources) if (FENCED_BY_USE.some((use) => use.test(text))) fenced.add(path);
  assert.ok(fenced.size > FENCED_FILES.length, 'no file found by what it uses: has fastify/lib/symbols.js or WalIndexHeader moved?');
  const problems: string[] = [];
  for (const path of fenced) {
    const source = sources.find((file) => file.path === path);
    if (source === undefined) {
      problems.push(`${path}: named as a fenced trick but not in src/ (moved? update FENCED_FILES)`);
      continue;
    }
    const problem = fenceProblem(source.text, anchors, inRepository);
    if (problem !== null) problems.push(`${path}: ${problem}`);
  }
  assert.deepEqual(problems, [], `performance tricks without a proper fence:\n${problems.join('\n')}`);
});

test(`no comment under src/ holds a benchmark figure: figures live in ${OPERATIONS}`, () => {
  const found = sources.flatMap(({ path, text }) => figuresIn(text).map((line) => `${path}: ${line}`));
  assert.deepEqual(found, [], `move these figures to ${OPERATIONS} (Performance) and link it from the comment:\n${found.join('\n')}`);
});

test(`every ${OPERATIONS}#anchor a src/ comment links to is a heading there`, () => {
  const broken: string[] = [];
  for (const { path, text } of sources) {
    for (const comment of commentsOf(text)) {
      for (const match of comment.matchAll(/docs\/operations\.md#([\w-]+)/g)) if (!anchors.has(match[1]!)) broken.push(`${path}: #${match[1]}`);
    }
  }
  assert.deepEqual(broken, [], `links to headings ${OPERATIONS} does not have:\n${broken.join('\n')}`);
});

test('the figure pattern catches measurements and leaves configured values alone', () => {
  for (const figure of ['~1.9 µs on this machine', '~2,800 instructions a request', 'GET /hello 97.4k -> 91.7k', '3-4% of the CPU', 'took ~12 ms', 'under callgrind', '~0.7 us a line', 'a third less time', '25 times quicker']) {
    assert.match(figure, FIGURE, `"${figure}" should count as a figure`);
  }
  for (const setting of ['within 10 s', 'a 5 s header timeout', 'a lock held for 8 s', '1000 ms unless a test says otherwise', 'fe80::1%eth0', 'RFC 7617']) {
    assert.doesNotMatch(setting, FIGURE, `"${setting}" is a setting, not a figure`);
  }
});

test('a fence is refused when its test or its anchor does not exist', () => {
  const fence = (guard: string, anchor: string) =>
    `// What it is.\n//\n// Performance trick. Relies on: something. Guarded by:\n// ${guard}. Figures: docs/operations.md#${anchor}\nexport {};\n`;
  const known = new Set(['the-wal-index-read']);
  const exists = (path: string) => path === 'test/unit/real.test.ts';
  assert.equal(fenceProblem(fence('test/unit/real.test.ts', 'the-wal-index-read'), known, exists), null);
  assert.match(fenceProblem(fence('test/unit/gone.test.ts', 'the-wal-index-read'), known, exists) ?? '', /does not exist/);
  assert.match(fenceProblem(fence('test/unit/real.test.ts', 'nowhere'), known, exists) ?? '', /is not a heading/);
  assert.match(fenceProblem('// Just a module.\nexport {};\n', known, exists) ?? '', /no "Performance trick\." header/);
});
