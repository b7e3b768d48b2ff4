// Prints the share of src/**/*.ts characters that sit in comments, so a reader can see whether comments are notes or notebooks.
// Run: node scripts/comment-share.ts [dir] [--files N]  (N: also list the N files with the most comment characters)
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/**
 * The comments of a TypeScript source, each as written (with its `//` or `/*`). The ranges come from TypeScript's parser
 * (the leading and trailing comments of every node and token), so a `//` inside a string, a template or a regular
 * expression is not taken for one.
 */
export function commentsOf(text: string, fileName = 'file.ts'): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false);
  const seen = new Set<number>();
  const found: string[] = [];
  const add = (ranges: ts.CommentRange[] | undefined): void => {
    for (const range of ranges ?? []) {
      if (seen.has(range.pos)) continue;
      seen.add(range.pos);
      found.push(text.slice(range.pos, range.end));
    }
  };
  const visit = (node: ts.Node): void => {
    add(ts.getLeadingCommentRanges(text, node.getFullStart()));
    add(ts.getTrailingCommentRanges(text, node.getEnd()));
    // Tokens (`{`, `,`, `)`) carry comments too; getChildren() lists them where forEachChild does not.
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  return found;
}

/** Characters inside comments (commentsOf). */
export function commentCharacters(text: string, fileName = 'file.ts'): number {
  return commentsOf(text, fileName).reduce((sum, comment) => sum + comment.length, 0);
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const top = args.includes('--files') ? Number(args[args.indexOf('--files') + 1]) : 0;
  const dir = args.find((arg, i) => !arg.startsWith('--') && args[i - 1] !== '--files') ?? 'src';
  let all = 0;
  let comments = 0;
  const perFile: [string, number, number][] = [];
  for (const file of sourceFiles(dir)) {
    const text = readFileSync(file, 'utf8');
    const inComments = commentCharacters(text, file);
    all += text.length;
    comments += inComments;
    perFile.push([relative('.', file), inComments, text.length]);
  }
  console.log(`${dir}: ${comments} of ${all} characters in comments (${((100 * comments) / all).toFixed(1)} %), ${perFile.length} files`);
  perFile.sort((a, b) => b[1] - a[1]);
  for (const [file, inComments, length] of perFile.slice(0, top)) {
    console.log(`${String(inComments).padStart(7)} ${((100 * inComments) / length).toFixed(0).padStart(3)} %  ${file}`);
  }
}
