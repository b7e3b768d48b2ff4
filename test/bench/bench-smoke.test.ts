// Runs `bench/run.ts --smoke` so the bench cannot rot: both tables, every endpoint, a number in every cell, and the chart. Never a speed.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { BENCH_CALLS } from '../../bench/calls.ts';

const REPO_ROOT = resolve(import.meta.dirname, '../..');
const NUMBER = /^\d[\d,]*(\.\d+)?$/;
const RATIO = /^\d+\.\d\d×$/;

let out: string;
let markdown: string;
let svg: string;

function runBench(args: readonly string[]): Promise<{ code: number | null; output: string }> {
  // The caller's BENCH_* settings must not turn the smoke run into a long one.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('BENCH_')));
  const child = spawn(process.execPath, [join(REPO_ROOT, 'bench/run.ts'), ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  return new Promise((done, fail) => {
    child.once('error', fail);
    child.once('close', (code) => done({ code, output }));
  });
}

/** The cells of the table row whose first cell is `first`, without the outer pipes. */
function row(first: string): string[] {
  const line = markdown.split('\n').find((candidate) => candidate.startsWith(`| ${first} |`));
  assert.ok(line !== undefined, `results.md has no row starting with ${first}:\n${markdown}`);
  return line.split(' | ').map((cell) => cell.replace(/^\| /, '').replace(/ \|$/, '').trim());
}

before(async () => {
  out = mkdtempSync(join(tmpdir(), 'account-api-bench-test-'));
  const result = await runBench(['--smoke', '--out', out]);
  assert.equal(result.code, 0, `bench/run.ts --smoke exited ${result.code}:\n${result.output}`);
  markdown = readFileSync(join(out, 'results.md'), 'utf8');
  svg = readFileSync(join(out, 'results.svg'), 'utf8');
});

after(() => rmSync(out, { recursive: true, force: true }));

test('results.md records the machine it ran on and links the chart', () => {
  for (const field of ['date', 'CPU', 'memory', 'Node', 'service', 'load']) assert.ok(row(field)[1] !== '', `machine field ${field} is empty`);
  assert.match(row('Node')[1]!, /^v\d+\.\d+\.\d+$/);
  assert.match(markdown, /!\[[^\]]+\]\(results\.svg\)/);
});

test('table 1 has a row for every endpoint with numbers for the service, the ceiling and Express', () => {
  assert.match(markdown, /^## Table 1/m);
  assert.doesNotMatch(markdown, /wrong answer/, 'a server answered wrongly in the smoke run');
  for (const call of BENCH_CALLS) {
    const cells = row(`\`${call.label}\``);
    const [, ...figures] = cells;
    for (const [index, value] of figures.slice(0, 9).entries()) {
      assert.match(value, NUMBER, `${call.label}: column ${index + 2} is '${value}'`);
    }
    assert.match(figures[9]!, RATIO, `${call.label}: service / ceiling is '${figures[9]}'`);
    assert.match(figures[10]!, RATIO, `${call.label}: service / Express is '${figures[10]}'`);
    assert.match(figures[12]!, /^(met|not met|—)$/, `${call.label}: verdict is '${figures[12]}'`);
  }
});

test('table 2 has a numeric row per account count, the ratio between them, memory and start-up', () => {
  assert.match(markdown, /^## Table 2/m);
  const sizes = markdown.split('\n').filter((line) => /^\| \d[\d,]* \|/.test(line));
  assert.ok(sizes.length >= 2, `expected at least two account counts in table 2:\n${markdown}`);
  for (const line of sizes) {
    const cells = line.split(' | ').slice(1);
    for (const cell of cells.slice(0, -1)) assert.match(cell, /^[\d,]+ · [\d.]+ \/ [\d.]+$/, `scaling cell '${cell}' in ${line}`);
    assert.match(cells.at(-1)!.replace(/ \|$/, ''), NUMBER, `peak RSS in ${line}`);
  }
  assert.match(markdown, /^\| `GET \/user` with [\d,]+ accounts against [\d,]+, \d+ connections \| \d+\.\d\d× \|/m);
  assert.match(markdown, /^\| peak resident memory \(VmHWM\)[^|]*\| [\d.]+ MB \|/m);
  assert.match(markdown, /^\| start to first answered request[^|]*\| \d+ ms /m);
  for (const call of BENCH_CALLS) {
    assert.match(markdown, new RegExp(`^\\| p99 latency at \\d+ connections, \`${call.label.replace(/[()/]/g, '\\$&')}\` \\| [\\d.]+ ms[^|]* \\|`, 'm'));
  }
});

test('results.svg is a chart with a labelled group of bars for every endpoint', () => {
  assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.match(svg, /<\/svg>\n$/);
  for (const call of BENCH_CALLS) assert.ok(svg.includes(`>${call.label}</text>`), `no label for ${call.label} in the chart`);
  const bars = svg.match(/<rect x="\d+(\.\d)?" y="\d+(\.\d)?" width="[\d.]+" height="14"/g) ?? [];
  assert.equal(bars.length, BENCH_CALLS.length * 3, 'one bar per server per endpoint');
});
