// Writes every .ts file under a folder, its comments removed, into another folder: diff two such copies to show that a
// change touched comments only (the code TypeScript's printer reads is the same, whatever the comments say).
// Run: node scripts/code-without-comments.ts <from> <to>
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

const [from, to] = process.argv.slice(2);
if (from === undefined || to === undefined) {
  console.error('usage: node scripts/code-without-comments.ts <from> <to>');
  process.exit(2);
}
const printer = ts.createPrinter({ removeComments: true });
for (const file of sourceFiles(from)) {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const out = join(to, relative(from, file));
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, printer.printFile(source));
}
