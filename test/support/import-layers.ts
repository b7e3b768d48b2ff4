// Reads the imports of src/ into a graph and finds what makes layering lie: cycles, and arrows from a lower layer to a higher one.
// Pure over the graph (readImportGraph is the only part that touches the disk), so a unit test can plant a violation and see it reported.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** Each file (relative to the source root, with '/' separators) and the files it imports. */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/**
 * Every relative `import`, `import type`, `export ... from` and `import()` of the .ts files under `root`, resolved to files.
 * Type-only imports count: a type that lives above is still an arrow that runs back up, even though it vanishes at run time.
 * Imports of non-.ts files (timezones.json), of packages and of files outside `root` (the client package) are not edges
 * between our modules, so they are left out.
 */
export function readImportGraph(root: string): ImportGraph {
  const graph = new Map<string, string[]>();
  const toKey = (file: string) => relative(root, file).split(sep).join('/');
  for (const file of sourceFiles(root)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles
      .map(({ fileName }) => fileName)
      .filter((specifier) => specifier.startsWith('.') && specifier.endsWith('.ts'))
      .map((specifier) => toKey(resolve(dirname(file), specifier)))
      .filter((target) => !target.startsWith('../'));
    graph.set(toKey(file), [...new Set(targets)]);
  }
  return graph;
}

/** The strongly connected components of more than one file (or a file importing itself), each sorted: every import cycle. */
export function findCycles(graph: ImportGraph): string[][] {
  // Tarjan's algorithm, iterative so a deep tree cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let next = 0;
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: { node: string; edge: number }[] = [{ node: start, edge: 0 }];
    index.set(start, next); low.set(start, next); next++; stack.push(start); onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const edges = graph.get(frame.node) ?? [];
      if (frame.edge < edges.length) {
        const to = edges[frame.edge++]!;
        if (!index.has(to)) {
          index.set(to, next); low.set(to, next); next++; stack.push(to); onStack.add(to);
          work.push({ node: to, edge: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.node);
      if (component.length > 1 || edges.includes(frame.node)) cycles.push(component.sort());
    }
  }
  return cycles.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** An import from a file in a lower layer to a file in a higher one. */
export type BackArrow = { from: string; fromLayer: number; to: string; toLayer: number };

/** Every edge whose target sits in a higher layer than its source; `layerOf` throws for a file no layer claims, so a new folder must be placed. */
export function findBackArrows(graph: ImportGraph, layerOf: (file: string) => number): BackArrow[] {
  const arrows: BackArrow[] = [];
  for (const [from, targets] of graph) {
    const fromLayer = layerOf(from);
    for (const to of targets) {
      const toLayer = layerOf(to);
      if (toLayer > fromLayer) arrows.push({ from, fromLayer, to, toLayer });
    }
  }
  return arrows.sort((a, b) => a.from.localeCompare(b.from) || a.to.localeCompare(b.to));
}

/** An import from one folder of a set into another of the same set. */
export type Crossing = { from: string; to: string };

/**
 * Every edge between two different folders of `sideBySide` (prefixes such as 'admin/'): folders that stand side by side in a layer
 * share what they need through a layer below, so neither comes to depend on the other's insides.
 */
export function findCrossings(graph: ImportGraph, sideBySide: readonly string[]): Crossing[] {
  const folderOf = (file: string) => sideBySide.find((folder) => file.startsWith(folder));
  const crossings: Crossing[] = [];
  for (const [from, targets] of graph) {
    const fromFolder = folderOf(from);
    if (fromFolder === undefined) continue;
    for (const to of targets) {
      const toFolder = folderOf(to);
      if (toFolder !== undefined && toFolder !== fromFolder) crossings.push({ from, to });
    }
  }
  return crossings.sort((a, b) => a.from.localeCompare(b.from) || a.to.localeCompare(b.to));
}
