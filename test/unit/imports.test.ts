// Imports under src/ and bench/ run one way (STYLE.md, "Imports run one way"; issues 27 and 37): no cycle, and no arrow from a
// lower layer up. Type-only imports count as much as any other: a type that lives above is a layering smell even though it is erased.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { findBackArrows, findCrossings, findCycles, readImportGraph, type BackArrow, type ImportGraph } from '../support/import-layers.ts';

const SRC = join(import.meta.dirname, '../../src');
const BENCH = join(import.meta.dirname, '../../bench');

type Layers = readonly (readonly [name: string, prefixes: readonly string[]])[];

/**
 * Lowest first. A file belongs to the layer of its longest matching prefix, so one file can sit apart from its folder;
 * a file no prefix claims fails the test, so a new folder is placed here on purpose.
 */
const LAYERS: Layers = [
  // Pure rules and definitions: no HTTP, no SQL, no settings (webhook events, errors and retry schedule among them).
  ['domain', ['domain/']],
  // The browser pages' shared look: a stylesheet and the wordmark, read from disk, importing nothing of ours.
  ['page-style', ['page-style/']],
  // Every settings type, parsed once from the environment and flags.
  ['config', ['config.ts']],
  ['store', ['store/']],
  // The one implementation of every change, and what the webhook operations need to do theirs (checking an address, sending
  // one delivery); the sandbox's demo accounts are seeded through the store as operations are.
  ['operations', ['operations/', 'sandbox/']],
  // Spans, below what serves requests: the pipeline, the admin port and the webhook delivery worker all run inside them.
  ['tracing', ['tracing/']],
  // How HTTP meets the domain, shared by every face: the pipeline, authentication (API keys and admin tokens), the wire.
  ['http', ['http/']],
  // The faces, side by side (FACES): the public routes, the admin API, the console.
  ['faces', ['routes/', 'admin/', 'console/']],
  // What runs: the factories that build the ports from the faces (service/admin-port.ts builds the admin port, and mounts the
  // console on it, as app.ts builds the public one), and the webhook delivery worker that runs beside them.
  ['ports', ['service/', 'app.ts', 'server.ts']],
  ['process', ['cli/', 'main.ts']],
];

/** The faces import nothing of each other: what two of them share (admin token auth, paging) sits below them, in http/ or operations/. */
const FACES = ['routes/', 'admin/', 'console/'];

/**
 * The bench (bench/README.md), lowest first: what is measured and how it is reported sit apart, so a report never reaches
 * into a run and a meter never into the servers it measures.
 */
const BENCH_LAYERS: Layers = [
  // What every part speaks of: the calls, the options, processes and their CPU time, the headers the peers copy.
  ['definitions', ['calls.ts', 'options.ts', 'processes.ts', 'cpu-time.ts', 'header-templates.ts']],
  // Measuring one call on one server: wrk, the figures a run yields and their medians, the engines' meters, the results' shape.
  ['measuring', ['measurement.ts', 'wrk.ts', 'load.ts', 'scale-out-meter.ts', 'results.ts']],
  // The servers measured and the databases they start from.
  [
    'servers',
    ['servers.ts', 'seed.ts', 'bulk-accounts.ts', 'at-size-seed.ts', 'redis-server.ts', 'ceiling-server.ts', 'peer-kit.ts', 'fastify-peer.ts', 'express-peer.ts'],
  ],
  // The modes: servers measured in turn, table by table.
  ['running', ['turns.ts', 'tables.ts', 'scale-out.ts', 'at-size.ts', 'instructions.ts']],
  // Markdown and the chart, from the results the modes return.
  ['reporting', ['markdown.ts', 'targets.ts', 'report.ts', 'chart.ts', 'scale-out-report.ts', 'at-size-report.ts', 'instructions-report.ts']],
  ['entry', ['run.ts']],
];

function layerIn(layers: Layers, where: string, file: string): number {
  let best = -1;
  let length = -1;
  layers.forEach(([, prefixes], layer) => {
    for (const prefix of prefixes) {
      if ((file === prefix || (prefix.endsWith('/') && file.startsWith(prefix))) && prefix.length > length) {
        best = layer;
        length = prefix.length;
      }
    }
  });
  if (best < 0) throw new Error(`${file} is in no layer: place it in ${where} (test/unit/imports.test.ts)`);
  return best;
}

const layerOf = (file: string) => layerIn(LAYERS, 'LAYERS', file);
const benchLayerOf = (file: string) => layerIn(BENCH_LAYERS, 'BENCH_LAYERS', file);

const describeArrow = (layers: Layers) => ({ from, fromLayer, to, toLayer }: BackArrow) =>
  `${from} (${layers[fromLayer]![0]}) -> ${to} (${layers[toLayer]![0]})`;

describe('the checker', () => {
  const graph = (edges: Record<string, string[]>): ImportGraph => new Map(Object.entries(edges));
  const byFolder = (file: string) => ['domain/', 'store/', 'http/'].findIndex((folder) => file.startsWith(folder));

  test('reports a planted cycle with every file in it, and nothing in an acyclic graph', () => {
    const cyclic = graph({ 'store/a.ts': ['store/b.ts'], 'store/b.ts': ['store/c.ts'], 'store/c.ts': ['store/a.ts', 'domain/d.ts'], 'domain/d.ts': [] });
    assert.deepEqual(findCycles(cyclic), [['store/a.ts', 'store/b.ts', 'store/c.ts']]);
    assert.deepEqual(findCycles(graph({ 'store/a.ts': ['store/b.ts', 'domain/d.ts'], 'store/b.ts': ['domain/d.ts'], 'domain/d.ts': [] })), []);
  });

  test('reports a file that imports itself as a cycle', () => {
    assert.deepEqual(findCycles(graph({ 'store/a.ts': ['store/a.ts'] })), [['store/a.ts']]);
  });

  test('reports a planted arrow from a lower layer up, and not one that runs down or stays level', () => {
    const planted = graph({ 'domain/d.ts': ['http/h.ts'], 'http/h.ts': ['store/s.ts', 'http/i.ts'], 'http/i.ts': [], 'store/s.ts': ['domain/d.ts'] });
    assert.deepEqual(findBackArrows(planted, byFolder), [{ from: 'domain/d.ts', fromLayer: 0, to: 'http/h.ts', toLayer: 2 }]);
  });

  test('reports an import from one side-by-side folder into another, and not one within a folder or down to a shared one', () => {
    const planted = graph({ 'console/c.ts': ['admin/a.ts', 'console/d.ts', 'http/h.ts'], 'admin/a.ts': ['http/h.ts'], 'console/d.ts': [], 'http/h.ts': [] });
    assert.deepEqual(findCrossings(planted, ['admin/', 'console/']), [{ from: 'console/c.ts', to: 'admin/a.ts' }]);
  });

  test('reads every form of import: type-only, re-export, dynamic, and leaves packages and files outside the root out', () => {
    const root = mkdtempSync(join(tmpdir(), 'import-layers-'));
    try {
      mkdirSync(join(root, 'store'));
      writeFileSync(join(root, 'store/a.ts'), [
        "import type { B } from './b.ts';",
        "export { c } from './c.ts';",
        "const d = await import('./d.ts');",
        "import { e } from '../domain/e.ts';",
        "import { f } from 'fastify';",
        "import { g } from '../../outside.ts';",
        "import data from './data.json' with { type: 'json' };",
      ].join('\n'));
      assert.deepEqual(readImportGraph(root).get('store/a.ts'), ['store/b.ts', 'store/c.ts', 'store/d.ts', 'domain/e.ts']);
    } finally {
      rmSync(root, { recursive: true });
    }
  });
});

describe('the imports of src/', () => {
  const real = readImportGraph(SRC);

  test('form no cycle', () => {
    const cycles = findCycles(real).map((files) => files.join(' <-> '));
    assert.deepEqual(cycles, [], 'import cycles (break each by moving what both sides need into a module below them)');
  });

  test('never run from a lower layer up', () => {
    const arrows = findBackArrows(real, layerOf).map(describeArrow(LAYERS));
    const order = LAYERS.map(([name]) => name).join(' < ');
    assert.deepEqual(arrows, [], `imports from a lower layer to a higher one (lowest first: ${order}); move what is shared down, or hand it in`);
  });

  test('never cross from one face into another', () => {
    const crossings = findCrossings(real, FACES).map(({ from, to }) => `${from} -> ${to}`);
    assert.deepEqual(crossings, [], `imports between faces (${FACES.join(', ')}); move what both need down, into http/ or operations/`);
  });

  test('places every file in a layer, so a new folder cannot slip past the check', () => {
    assert.throws(() => layerOf('jobs/nightly.ts'), /jobs\/nightly\.ts is in no layer: place it in LAYERS/);
    for (const file of real.keys()) layerOf(file);
  });
});

describe('the imports of bench/', () => {
  const real = readImportGraph(BENCH);

  test('form no cycle', () => {
    const cycles = findCycles(real).map((files) => files.join(' <-> '));
    assert.deepEqual(cycles, [], 'import cycles in bench/ (move what both sides need into a module below them, as measurement.ts holds the figures)');
  });

  test('never run from a lower layer up', () => {
    const arrows = findBackArrows(real, benchLayerOf).map(describeArrow(BENCH_LAYERS));
    const order = BENCH_LAYERS.map(([name]) => name).join(' < ');
    assert.deepEqual(arrows, [], `imports from a lower layer of the bench to a higher one (lowest first: ${order})`);
  });

  test('places every file in a layer, so a new file cannot slip past the check', () => {
    assert.throws(() => benchLayerOf('new-mode.ts'), /new-mode\.ts is in no layer: place it in BENCH_LAYERS/);
    for (const file of real.keys()) benchLayerOf(file);
  });
});
