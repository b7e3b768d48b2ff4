// The scale-out table's own measuring: wrk cycling through many Authorization headers and checking bodies by pattern, and
// the meter's sums over PostgreSQL backends that come and go and over Redis's command counts.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clockTicksPerSecond } from '../../bench/cpu-time.ts';
import { cpuBetweenPids, redisCommandCounts } from '../../bench/scale-out-meter.ts';
import { runWrk, writeWrkScript, type WrkLoad } from '../../bench/wrk.ts';
import { requiring } from '../support/requiring.ts';
import { toolsSkipReason } from './bench-tools.ts';

const { after, before, test } = requiring(toolsSkipReason([['wrk', 'wrk']]));
const { test: pureTest } = requiring(undefined);

let dir: string;
let server: Server;
let url: string;
const seen = new Map<string, number>();

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'account-api-bench-scale-out-'));
  // Answers each request with the number of the Authorization value it carried, so the pattern can be checked.
  server = createServer((request, response) => {
    const authorization = request.headers.authorization ?? 'none';
    seen.set(authorization, (seen.get(authorization) ?? 0) + 1);
    response.end(`key-${authorization.replace(/\D/g, '') || 'none'}`);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/api/v0/user`;
});

after(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

function load(bodyPattern: string): WrkLoad {
  const file = join(dir, 'authorizations');
  writeFileSync(file, ['Basic 1', 'Basic 2', 'Basic 3', 'Basic 4', ''].join('\n'));
  return { url, method: 'GET', headers: {}, bodies: [], expectedStatus: 200, allowedBodies: [], bodyPattern, authorizations: { file, first: 2 } };
}

test('wrk sends every Authorization value of the file in turn, one per request, and checks bodies by pattern', async () => {
  seen.clear();
  const script = writeWrkScript(join(dir, 'spread.lua'), load('^key%-%d$'), 'spread');
  const result = await runWrk(script, url, { connections: 2, threads: 1, durationSeconds: 0.5 }, clockTicksPerSecond());
  assert.ok(result.requests > 20, `wrk answered only ${result.requests} requests`);
  assert.equal(result.wrong, 0, `answers were judged wrong: ${result.firstWrong}`);
  assert.deepEqual([...seen.keys()].sort(), ['Basic 1', 'Basic 2', 'Basic 3', 'Basic 4'], 'not every value of the file was sent');
  const counts = [...seen.values()];
  assert.ok(Math.max(...counts) - Math.min(...counts) <= 4, `the values were not sent in turn: ${JSON.stringify([...seen])}`);
});

test('an answer that does not match the pattern is counted wrong', async () => {
  const script = writeWrkScript(join(dir, 'spread-wrong.lua'), load('^other$'), 'spread');
  const result = await runWrk(script, url, { connections: 1, threads: 1, durationSeconds: 0.3 }, clockTicksPerSecond());
  assert.ok(result.requests > 0);
  assert.equal(result.wrong, result.requests, 'answers that match no pattern were let through');
});

pureTest('backends that appear during a run count whole, and those that vanish are counted apart', () => {
  const before = new Map([
    [10, 1_000],
    [11, 5_000],
  ]);
  const after = new Map([
    [10, 4_000],
    [12, 2_500],
  ]);
  assert.deepEqual(cpuBetweenPids(before, after), { ns: 3_000 + 2_500, vanished: 1 });
});

pureTest("Redis's commands are summed from commandstats without INFO's own, and scripts are counted apart", async () => {
  const text = [
    '# Commandstats',
    'cmdstat_evalsha:calls=7,usec=70,usec_per_call=10.00,rejected_calls=0,failed_calls=0',
    'cmdstat_incr:calls=7,usec=7,usec_per_call=1.00,rejected_calls=0,failed_calls=0',
    'cmdstat_info:calls=3,usec=90,usec_per_call=30.00,rejected_calls=0,failed_calls=0',
    'cmdstat_get:calls=2,usec=2,usec_per_call=1.00,rejected_calls=0,failed_calls=0',
  ].join('\r\n');
  const redis = { info: async () => text } as unknown as Parameters<typeof redisCommandCounts>[0];
  assert.deepEqual(await redisCommandCounts(redis), { commands: 16, scripts: 7 });
});
