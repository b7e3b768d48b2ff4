// Runs `bench/run.ts --instructions --smoke` on the service and the ceiling, so the callgrind mode cannot rot: the servers
// start under valgrind, the dumps are read, and instructions.md has a count in every cell. Never a count's size.
// Needs valgrind (skipped with the reason without it; in CI, a failure).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requiring } from '../support/requiring.ts';
import { row, runBench, section, toolsSkipReason } from './bench-tools.ts';

const { after, before, test } = requiring(
  toolsSkipReason([
    ['valgrind', 'valgrind'],
    ['callgrind_control', 'valgrind'],
  ]),
);

// A smoke phase is a few requests: on a busy machine a collection or a compilation can land in the N phase three times
// running (bench/instructions.ts retries), and the difference comes out negative. What is checked here is the table's shape.
const COUNT = /^-?\d[\d,]*( ±[\d.]+ %)?$/;
const CALLS = ['GET /hello', 'GET /hello with credentials', 'GET /user'];

let out: string;
let markdown: string;

before(async () => {
  out = mkdtempSync(join(tmpdir(), 'account-api-bench-instructions-test-'));
  // Two servers, both at once: start-up under valgrind is most of the time, and the service is what changes.
  const result = await runBench(['--instructions', '--smoke', '--servers', 'service,ceiling', '--out', out]);
  assert.equal(result.code, 0, `bench/run.ts --instructions --smoke exited ${result.code}:\n${result.output}`);
  markdown = readFileSync(join(out, 'instructions.md'), 'utf8');
});

after(() => rmSync(out, { recursive: true, force: true }));

test('instructions.md says how it counted, with which valgrind', () => {
  assert.match(row(markdown, 'valgrind')?.[1] ?? '', /^valgrind-\d+\.\d+/);
  assert.match(row(markdown, 'method')?.[1] ?? '', /--trace-children=no/);
  assert.doesNotMatch(markdown, /## Servers without figures/, 'a server failed under callgrind');
});

test('every call has a count per answer for the service and the ceiling, main thread and all threads', () => {
  for (const heading of ['## Instructions per answer, main thread', '## Instructions per answer, all threads']) {
    const text = section(markdown, heading);
    for (const call of CALLS) {
      const cells = row(text, `\`${call}\``);
      assert.ok(cells !== undefined, `no row for ${call} under '${heading}':\n${text}`);
      assert.match(cells[1]!, COUNT, `${call}: service count is '${cells[1]}'`);
      assert.match(cells[2]!, COUNT, `${call}: ceiling count is '${cells[2]}'`);
      assert.match(cells[3]!, /^-?\d+\.\d\d×$/, `${call}: ceiling / service is '${cells[3]}'`);
    }
  }
});

test("the targets are judged and authentication's own count is given", () => {
  const targets = section(markdown, '## Targets');
  for (const call of ['GET /hello', 'GET /user']) {
    const line = targets.split('\n').find((candidate) => candidate.startsWith(`| instructions per answer, \`${call}\`, main thread: ceiling / service`));
    assert.ok(line !== undefined, `no target row for ${call}:\n${targets}`);
    assert.match(line, /\| (met|not met) \|$/);
  }
  assert.match(row(section(markdown, "## Authentication's own count"), 'service')?.[1] ?? '', /^-?\d[\d,]*$/);
});
