// Runs `bench/run.ts --at-size` at tiny sizes so the mode cannot rot: one table, a column per size, a figure in every cell and
// a verdict per measure. Never a speed. Needs wrk, redis-server and PostgreSQL (skipped with the reason; in CI, a failure).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { growTo, planSeeding, sampleIds } from '../../bench/at-size-seed.ts';
import type { AtSizeResults, AtSizeRow } from '../../bench/at-size.ts';
import { renderAtSize } from '../../bench/at-size-report.ts';
import { parseOptions } from '../../bench/options.ts';
import { runToEnd, SERVICE_MAIN } from '../../bench/processes.ts';
import { describeMachine, type Cell } from '../../bench/results.ts';
import { cleanEnv } from '../../bench/servers.ts';
import { ADMIN_URL, createTestDatabase, postgresSkipReason } from '../support/postgres.ts';
import { requiring } from '../support/requiring.ts';
import { row, runBench, toolsSkipReason } from './bench-tools.ts';

const skip =
  toolsSkipReason([
    ['wrk', 'wrk'],
    ['redis-server', 'redis-server'],
  ]) ?? (await postgresSkipReason());
const { after, before, test } = requiring(skip);
const { test: pureTest } = requiring(undefined);

const NUMBER = /^\d[\d,]*(\.\d+)?$/;
const RATIO = /^\d+\.\d\d×$/;
const MEASURES_WITH_VERDICT = [
  'start-up: spawn to first 200 on GET /hello, median of 2 (ms)',
  'peak resident memory of the service (VmHWM, MB)',
  ...['`GET /user` one hot key', '`GET /user` keys spread over the table'].flatMap((call) =>
    ['service µs CPU / answer', 'PostgreSQL backends µs / answer', 'redis-server µs / answer', 'total µs / answer', 'req/s'].map((what) => `${call}: ${what}`),
  ),
];

let out: string;
let markdown: string;

before(async () => {
  out = mkdtempSync(join(tmpdir(), 'account-api-bench-at-size-test-'));
  const result = await runBench(['--at-size', '--smoke', '--at-size-accounts', '100,1000', '--starts', '2', '--duration', '1', '--out', out, '--postgres', ADMIN_URL]);
  assert.equal(result.code, 0, `bench/run.ts --at-size exited ${result.code}:\n${result.output}`);
  markdown = readFileSync(join(out, 'results.md'), 'utf8');
});

after(() => rmSync(out, { recursive: true, force: true }));

test('the at-size table has a column per size, the ratio of the largest to the smallest, and a verdict', () => {
  const header = row(markdown, 'measure');
  assert.deepEqual(header, ['measure', '100 accounts', '1,000 accounts', '1,000 / 100', 'flat?'], `unexpected header: ${header}`);
  assert.doesNotMatch(markdown, /wrong answer/, `a run answered wrongly:\n${markdown}`);
  for (const measure of MEASURES_WITH_VERDICT) {
    const cells = row(markdown, measure);
    assert.ok(cells !== undefined, `no row '${measure}' in:\n${markdown}`);
    assert.match(cells[1]!, NUMBER, `${measure} at 100 accounts: ${cells[1]}`);
    assert.match(cells[2]!, NUMBER, `${measure} at 1,000 accounts: ${cells[2]}`);
    assert.match(cells[3]!, RATIO, `${measure}'s ratio: ${cells[3]}`);
    assert.match(cells[4]!, /^(flat|grows|falls)$/, `${measure}'s verdict: ${cells[4]}`);
  }
});

test('the spread run cycles through real keys of every account at these sizes, and the load average of each size is recorded', () => {
  assert.deepEqual(row(markdown, 'spread: accounts with real keys it cycles through')?.slice(1, 3), ['100', '1,000']);
  const load = row(markdown, 'load average (1 min) when this size was measured');
  assert.ok(load !== undefined && NUMBER.test(load[1]!) && NUMBER.test(load[2]!), `no load average per size: ${load}`);
  assert.ok((row(markdown, 'load average')?.[1] ?? '') !== '', 'the machine table has no load average');
});

test("each size's sampled accounts get real keys written in place, in id order among the others, not appended", async () => {
  const database = await createTestDatabase();
  try {
    await runToEnd(SERVICE_MAIN, ['migrate'], { ...cleanEnv(), DATABASE_URL: database.url });
    const plan = await planSeeding(database.url, [300, 3000], 200);
    const next = await growTo(database.url, plan, await growTo(database.url, plan, plan.firstId, 300, () => {}), 3000, () => {});
    assert.equal(next, plan.firstId + 3000);
    assert.deepEqual([...plan.samples.values()].map((ids) => ids.length), [200, 200]);
    const { rows } = await database.query('SELECT account_id, key_id, encode(secret_hash, $1) AS hash FROM api_keys ORDER BY ctid', ['hex']);
    assert.equal(rows.length, 3000);
    const ids = rows.map((row: { account_id: string }) => Number(row.account_id));
    assert.deepEqual(ids, [...ids].sort((a, b) => a - b), 'the key rows are not in id order on disk: the sampled ones were appended');
    const stored = new Map(rows.map((row: { account_id: string; key_id: string; hash: string }) => [Number(row.account_id), row]));
    for (const [id, key] of plan.keys) {
      assert.equal(stored.get(id)?.key_id, key.keyId, `account ${id} has not its real key`);
      assert.equal(stored.get(id)?.hash, key.hash.toString('hex'));
    }
    assert.equal(rows.filter((row: { key_id: string }) => !row.key_id.includes('_')).length, plan.keys.size, 'a real key id among the unknown ones');
  } finally {
    await database.drop();
  }
});

pureTest('sampled accounts are distinct, within the seeded range, and drawn from all of it', () => {
  const ids = sampleIds(11, 1_000_010, 1000);
  assert.equal(new Set(ids).size, 1000);
  assert.ok(ids.every((id) => id >= 11 && id <= 1_000_010), 'an id outside the seeded range');
  // Drawn from the whole range, not its start: the chance that 1,000 uniform draws all fall in one half is 2^-999.
  assert.ok(ids.some((id) => id > 500_010) && ids.some((id) => id <= 500_010), 'the sample covers only half the table');
  assert.deepEqual([...sampleIds(5, 9, 10)].sort((a, b) => a - b), [5, 6, 7, 8, 9], 'a sample as large as the table is all of it');
});

pureTest('--at-size measures 10^3, 10^6 and 10^7 accounts into bench/at-size by default, and is not part of the default run', () => {
  const options = parseOptions(['--at-size'], {}, '/repo');
  assert.ok(!('usage' in options));
  assert.deepEqual(options.atSize?.accounts, [1000, 1_000_000, 10_000_000]);
  assert.equal(options.atSize?.sample, 200_000);
  assert.match(options.out, /bench\/at-size$/);
  const plain = parseOptions([], {}, '/repo');
  assert.ok(!('usage' in plain) && plain.atSize === null);
});

function measured(cpu: number, rate: number, postgresMicros = 10): Cell {
  return {
    ok: true,
    value: {
      requestsPerSecond: rate,
      p50Ms: 1,
      p99Ms: 2,
      responses: 1000,
      cpuMicrosPerAnswer: cpu,
      cpuSource: 'schedstat',
      systemShare: 0.2,
      serverCores: 1,
      loadGeneratorCores: 0.1,
      scaleOut: { postgresMicros, redisMicros: 5, pgTransactions: 0, pgRowsWritten: 0, redisCommands: 1, redisScripts: 1, backendsVanished: 0, pgWritesPerKeyPerMinute: null, walBytes: 0, retainedBytes: 0, drainServiceMicros: 0 },
    },
  };
}

pureTest(`a measure is flat within 1.25 times the smaller size's or 1 µs of it, and req/s down to 0.80 times`, () => {
  const sized = (accounts: number, hotCpu: number, spreadCpu: number, spreadRate: number, startMs: number, hotBackends: number): AtSizeRow => ({
    accounts,
    seedingSeconds: 1,
    spreadKeys: Math.min(accounts, 200_000),
    loadAverage: 1,
    startsMs: [startMs],
    peakRssMB: 100,
    hot: measured(hotCpu, 1000, hotBackends),
    spread: measured(spreadCpu, spreadRate),
  });
  const results: AtSizeResults = {
    machine: { ...describeMachine([]), loadAverageAtEnd: 1 },
    command: 'npm run bench -- --at-size',
    smoke: false,
    settings: { connections: 64, durationSeconds: 5, warmupSeconds: 1, loadThreads: 1, rounds: 1, starts: 1 },
    rows: [sized(1000, 100, 100, 1000, 400, 0.1), sized(1_000_000, 110, 140, 700, 400, 0.1), sized(10_000_000, 120, 160, 700, 600, 0.5)],
  };
  const text = renderAtSize(results);
  // The largest size against the smallest, then against the one before it.
  const verdict = (measure: string) => row(text, measure)?.[5];
  assert.equal(verdict('`GET /user` one hot key: service µs CPU / answer'), 'flat'); // 1.20×
  assert.equal(verdict('`GET /user` keys spread over the table: service µs CPU / answer'), 'grows'); // 1.60×
  assert.equal(verdict('`GET /user` keys spread over the table: req/s'), 'falls'); // 0.70×
  assert.equal(verdict('start-up: spawn to first 200 on GET /hello, median of 1 (ms)'), 'grows'); // 1.50×
  assert.equal(verdict('`GET /user` one hot key: PostgreSQL backends µs / answer'), 'flat'); // 5.00×, but 0.4 µs more
  assert.deepEqual(row(text, '`GET /user` one hot key: service µs CPU / answer')?.slice(1), ['100', '110', '120', '1.20×', 'flat', '1.09×', 'flat']);
  assert.deepEqual(row(text, '`GET /user` keys spread over the table: service µs CPU / answer')?.slice(4), ['1.60×', 'grows', '1.14×', 'flat']);
  assert.deepEqual(row(text, 'measure')?.slice(4), ['10,000,000 / 1,000', 'flat?', '10,000,000 / 1,000,000', 'flat?']);
});
