// Runs `bench/run.ts --smoke` so the bench cannot rot: the targets, every table with every endpoint on every server and a
// number in every cell, and the chart. Never a speed. Needs wrk (skipped with the reason without it; in CI, a failure).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_CALLS } from '../../bench/calls.ts';
import { ADMIN_URL } from '../support/postgres.ts';
import { requiring } from '../support/requiring.ts';
import { row, runBench, section, toolsSkipReason } from './bench-tools.ts';

const { after, before, test } = requiring(toolsSkipReason([['wrk', 'wrk']]));

const NUMBER = /^\d[\d,]*(\.\d+)?$/;
const RATIO = /^\d+\.\d\d×$/;
const VERDICT = /^(met|not met|—)$/;

let out: string;
let markdown: string;
let svg: string;

/** The row of `call` in the section under `heading`, failing with the section when there is none. */
function callRow(heading: string, label: string): string[] {
  const text = section(markdown, heading);
  const cells = row(text, `\`${label}\``);
  assert.ok(cells !== undefined, `no row for ${label} under '${heading}':\n${text}`);
  return cells.slice(1);
}

before(async () => {
  out = mkdtempSync(join(tmpdir(), 'account-api-bench-test-'));
  // Table 3 on the PostgreSQL the other suites use (TEST_POSTGRES_URL), not a default of the bench's.
  const result = await runBench(['--smoke', '--out', out, '--postgres', ADMIN_URL]);
  assert.equal(result.code, 0, `bench/run.ts --smoke exited ${result.code}:\n${result.output}`);
  markdown = readFileSync(join(out, 'results.md'), 'utf8');
  svg = readFileSync(join(out, 'results.svg'), 'utf8');
});

after(() => rmSync(out, { recursive: true, force: true }));

test('results.md records the machine it ran on, how CPU time was read, and links the chart', () => {
  for (const field of ['date', 'CPU', 'memory', 'Node', 'service', 'load', 'CPU time', 'load generator']) {
    assert.ok((row(markdown, field)?.[1] ?? '') !== '', `machine field ${field} is empty`);
  }
  assert.match(row(markdown, 'Node')![1]!, /^v\d+\.\d+\.\d+$/);
  assert.match(row(markdown, 'load')![1]!, /^wrk -t\d+ -c\d+ /);
  assert.match(markdown, /!\[[^\]]+\]\(results\.svg\)/);
});

test('no server answered wrongly in the smoke run', () => {
  const problems = markdown.includes('## Wrong answers') ? section(markdown, '## Wrong answers') : '';
  assert.doesNotMatch(markdown, /wrong answer/, `a server answered wrongly in the smoke run:\n${problems}`);
});

test('the targets table judges CPU, authentication, the defaults, req/s and memory, each met or not', () => {
  const targets = section(markdown, '## Targets');
  for (const measure of [
    'CPU per answer, `GET /hello`: ceiling / service',
    'CPU per answer, `GET /user`: service against plain Fastify',
    "authentication's own CPU per answer",
    'CPU per answer, `GET /user`: lean settings / default settings',
    'req/s, `GET /settings`: service / Express',
    'peak resident memory (VmHWM) over table 1: service / ceiling',
  ]) {
    const line = targets.split('\n').find((candidate) => candidate.startsWith(`| ${measure}`));
    assert.ok(line !== undefined, `no target row '${measure}':\n${targets}`);
    assert.match(line, /\| (met|not met) \|$/, `target '${measure}' has no verdict: ${line}`);
  }
});

test('table 1 gives CPU µs per answer for every endpoint on the service, the ceiling, Fastify and Express', () => {
  for (const call of BENCH_CALLS) {
    const cells = callRow('## Table 1', call.label);
    for (const [index, value] of cells.slice(0, 4).entries()) assert.match(value, NUMBER, `${call.label}: CPU column ${index + 2} is '${value}'`);
    for (const value of cells.slice(4, 7)) assert.match(value, RATIO, `${call.label}: CPU ratio is '${value}'`);
    assert.match(cells[8]!, VERDICT, `${call.label}: CPU verdict is '${cells[8]}'`);
  }
});

test('requests per second and latency for every endpoint on every server', () => {
  for (const call of BENCH_CALLS) {
    const rates = callRow('### Requests per second', call.label);
    for (const value of rates.slice(0, 4)) assert.match(value, NUMBER, `${call.label}: req/s is '${value}'`);
    for (const value of rates.slice(4, 7)) assert.match(value, RATIO, `${call.label}: req/s ratio is '${value}'`);
    assert.match(rates[8]!, VERDICT, `${call.label}: req/s verdict is '${rates[8]}'`);
    for (const value of callRow('### Latency', call.label)) assert.match(value, /^[\d.]+ \/ [\d.]+$/, `${call.label}: latency is '${value}'`);
  }
});

test("authentication's own cost on every server, and the defaults against the lean settings", () => {
  const authentication = section(markdown, "### Authentication's own cost");
  for (const server of ['service', 'ceiling', 'Fastify', 'Express']) {
    const cells = row(authentication, server);
    assert.ok(cells !== undefined, `no authentication row for ${server}:\n${authentication}`);
    for (const value of cells.slice(1)) assert.match(value, /^-?\d+(\.\d+)?$/, `${server}: '${value}'`);
  }
  const defaults = section(markdown, '### The service at its default settings');
  assert.match(row(defaults, 'defaults')?.[1] ?? '', NUMBER, `no CPU figure for the defaults:\n${defaults}`);
  assert.match(row(defaults, 'lean / defaults')?.[1] ?? '', RATIO);
});

test("the resident memory table gives every server of table 1 its peak and its megabytes by kind, which add up to its resident size", () => {
  const memory = section(markdown, '### Resident memory');
  for (const server of ['service', 'service-defaults', 'ceiling', 'ceiling+sqlite', 'fastify', 'express']) {
    const cells = row(memory, server);
    assert.ok(cells !== undefined, `no row for ${server}:\n${memory}`);
    const figures = cells.slice(1, 6);
    for (const figure of figures) assert.match(figure, NUMBER, `${server}: '${figure}' in\n${memory}`);
    const [peak, ...kinds] = figures.map(Number);
    // Read at the end, so never above the peak (plus the rounding of five figures); V8's heap and Node's binary are never empty.
    const resident = kinds.reduce((sum, kind) => sum + kind, 0);
    assert.ok(resident > 0 && resident <= peak! + 0.5, `${server}: ${kinds.join(' + ')} MB resident against a peak of ${peak} MB`);
    assert.ok(kinds[0]! > 10 && kinds[3]! > 10, `${server}: V8's heap ${kinds[0]} MB, files ${kinds[3]} MB`);
  }
});

test('table 2 has a numeric row per account count, the ratio between them, memory and start-up', () => {
  const two = section(markdown, '## Table 2');
  const sizes = two.split('\n').filter((line) => /^\| \d[\d,]* \|/.test(line));
  assert.ok(sizes.length >= 2, `expected at least two account counts in table 2:\n${two}`);
  for (const line of sizes) {
    const cells = line.split(' | ').slice(1);
    for (const cell of cells.slice(0, -1)) assert.match(cell, /^[\d,]+ · [\d.]+ µs · [\d.]+ \/ [\d.]+$/, `scaling cell '${cell}' in ${line}`);
    assert.match(cells.at(-1)!.replace(/ \|$/, ''), NUMBER, `peak RSS in ${line}`);
  }
  assert.match(two, /^\| `GET \/user` req\/s with [\d,]+ accounts against [\d,]+, \d+ connections \| \d+\.\d\d× \|/m);
  assert.match(two, /^\| peak resident memory \(VmHWM\)[^|]*\| [\d.]+ MB \|/m);
  assert.match(two, /^\| start to first answered request[^|]*\| \d+ ms /m);
});

test('results.svg is a chart with a labelled group of bars for every endpoint, one bar per server', () => {
  assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  assert.match(svg, /<\/svg>\n$/);
  for (const call of BENCH_CALLS) assert.ok(svg.includes(`>${call.label}</text>`), `no label for ${call.label} in the chart`);
  const bars = svg.match(/<rect x="\d+(\.\d)?" y="\d+(\.\d)?" width="[\d.]+" height="14"/g) ?? [];
  assert.equal(bars.length, BENCH_CALLS.length * 4, 'one bar per server per endpoint');
});

test('table 3 puts the service on PostgreSQL + Redis beside SQLite, with every figure, or says why it was not measured', async () => {
  const three = section(markdown, '## Table 3');
  // Measured wherever PostgreSQL (TEST_POSTGRES_URL's server, as BENCH_POSTGRES_URL defaults) and redis-server are here.
  if (/^Not measured in this run: /m.test(three)) {
    assert.ok(!process.env.CI, `table 3 was not measured in CI:\n${three}`);
    return;
  }
  for (const label of ['GET /user', 'GET /user, keys spread over many accounts', 'POST /settings']) {
    const cells = row(three, `\`${label}\``);
    assert.ok(cells !== undefined, `no table 3 row for ${label}:\n${three}`);
    for (const [index, value] of cells.slice(1).entries()) {
      assert.match(value, /^\d[\d,]*(\.\d+)?(×| \(\d+\.\d+\))?$/, `${label}: column ${index + 2} of table 3 is '${value}'`);
    }
  }
  // What the capacity model takes: WAL and database growth per answer (a write logs WAL), in the table and in results.json.
  const storage = three.slice(three.indexOf('| call | WAL bytes / answer'));
  for (const label of ['GET /user', 'GET /user, keys spread over many accounts', 'POST /settings']) {
    const cells = row(storage, `\`${label}\``);
    assert.ok(cells !== undefined, `no row for ${label} in table 3's WAL and growth table:\n${three}`);
    for (const value of cells.slice(1)) assert.match(value, /^-?\d[\d,]*(\.\d+)?$/, `${label}: WAL and growth cell '${value}'`);
  }
  const json = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8'));
  const write = json.scaleOut.rows.find((one: { call: { id: string } }) => one.call.id === 'post-settings');
  assert.ok(write.postgres.value.scaleOut.walBytes > 0, `results.json: a write logged no WAL: ${JSON.stringify(write.postgres.value.scaleOut)}`);
  assert.ok(json.scaleOut.bytesPerAccount > 0, 'results.json: seeded accounts took no room');
  const targets = section(markdown, '## Targets');
  for (const measure of [
    'CPU per answer, `GET /user` (one key): PostgreSQL + Redis, every process',
    "CPU per answer, `GET /user` (one key): PostgreSQL + Redis, the service's own process",
    'PostgreSQL transactions per answer',
    'Redis round trips per answer, `GET /user`',
    'PostgreSQL rows written per key per minute',
  ]) {
    const line = targets.split('\n').find((candidate) => candidate.startsWith(`| ${measure}`));
    assert.ok(line !== undefined, `no target row '${measure}':\n${targets}`);
    assert.match(line, /\| (met|not met) \|$/, `target '${measure}' has no verdict: ${line}`);
  }
});
