// Finds functions that take more than a few parameters: past four, a call site is a row of values only the order explains,
// and the values usually belong together in an object (issue 37). Pure over source text, so a unit test can plant one.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';

/** A function with more parameters than allowed: where it is, what it is called, and how many it takes. */
export type LongParameterList = { readonly file: string; readonly name: string; readonly line: number; readonly parameters: number };

/** The name a reader would look for: the declaration's own, the variable or property an anonymous function is assigned to, `Class.method`. */
function nameOf(node: ts.SignatureDeclaration): string {
  const own = node.name !== undefined && ts.isIdentifier(node.name) ? node.name.text : undefined;
  const parent = node.parent;
  if (ts.isConstructorDeclaration(node) || ts.isMethodDeclaration(node)) {
    const owner = ts.isClassLike(parent) && parent.name !== undefined ? `${parent.name.text}.` : '';
    return `${owner}${ts.isConstructorDeclaration(node) ? 'constructor' : (own ?? node.name!.getText())}`;
  }
  if (own !== undefined) return own;
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && ts.isIdentifier(parent.name)) {
    return parent.name.text;
  }
  return '(anonymous function)';
}

/** Every function, method, constructor and arrow with a body in `source` taking more than `most` parameters (`this` not counted). */
export function findLongParameterLists(file: string, source: string, most: number): LongParameterList[] {
  const tree = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: LongParameterList[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const parameters = node.parameters.filter((parameter) => !(ts.isIdentifier(parameter.name) && parameter.name.text === 'this')).length;
      if (parameters > most) {
        const line = tree.getLineAndCharacterOfPosition(node.getStart(tree)).line + 1;
        found.push({ file, name: nameOf(node), line, parameters });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(tree);
  return found;
}

/** The same over every .ts file under `root`, files named relative to it with '/' separators. */
export function findLongParameterListsUnder(root: string, most: number): LongParameterList[] {
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? files(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
    );
  return files(root)
    .sort()
    .flatMap((path) => findLongParameterLists(relative(root, path).split(sep).join('/'), readFileSync(path, 'utf8'), most));
}
