// Unknown user and wrong key must be indistinguishable: the same body and, within noise, the same time.
// A measurement, not part of `npm test` (a loaded machine's scheduler can flip a median): `npm run test:timing` runs it, on a
// quiet machine. What npm test guards instead, deterministically: test/unit/http/auth/decoy-comparison.test.ts (the same store
// lookup and whole-hash comparison on both paths) and test/e2e/auth-refusals-alike.test.ts (the same bodies).
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { after, before, test } from 'node:test';
import { composeKey, issueKey, parseKey, randomBase62 } from '../../src/domain/api-keys.ts';
import { basic } from '../support/http.ts';
import { createAccount, createWorkspace, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';

const SAMPLES = Number(process.env.TIMING_SAMPLES ?? 2000);

let workspace: Workspace;
let server: ServerProcess;
let alice: Account;
let bob: Account;

before(async () => {
  workspace = createWorkspace({ LOG_LEVEL: 'warn' });
  alice = await createAccount(workspace, 'alice');
  bob = await createAccount(workspace, 'bob');
  server = await startServer(workspace);
});

after(async () => {
  await server.stop();
  workspace.cleanup();
});

function timedGet(agent: Agent, url: URL, authorization: string): Promise<{ ms: number; status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const outgoing = request(url, { agent, headers: { authorization } }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ ms: Number(process.hrtime.bigint() - started) / 1e6, status: response.statusCode ?? 0, body }));
    });
    outgoing.on('error', reject).end();
  });
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

test('unknown user and wrong key get identical bodies and agree in median time within noise', async () => {
  const url = new URL(`${server.api}/user`);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const neverIssued = issueKey('live').token;
  // A key id that exists (key ids are not secret) with a wrong secret: the store finds a row, the hash does not match.
  const parsed = parseKey(alice.key);
  assert.ok(parsed.ok);
  const wrongSecret = composeKey('live', parsed.key.keyId, randomBase62(32)).token;
  const cases = {
    'unknown user': basic('nobody', neverIssued),
    'wrong key': basic(alice.username, neverIssued),
    'unknown user, existing key id': basic('nobody', wrongSecret),
    'wrong key, existing key id': basic(alice.username, wrongSecret),
    // A second series of the first case: how far apart two runs of the very same thing land is the noise.
    'unknown user (again)': basic('nobody', neverIssued),
  };
  const names = Object.keys(cases) as (keyof typeof cases)[];
  const times = new Map(names.map((name) => [name, [] as number[]]));
  const bodies = new Map<string, Set<string>>(names.map((name) => [name, new Set()]));
  for (let warmup = 0; warmup < 200; warmup++) await timedGet(agent, url, cases[names[warmup % names.length]!]);
  // Interleaved, so drift in the machine's load affects every case alike.
  for (let i = 0; i < SAMPLES; i++) {
    for (const name of names) {
      const result = await timedGet(agent, url, cases[name]);
      assert.equal(result.status, 401, `${name} answered ${result.status}`);
      times.get(name)!.push(result.ms);
      bodies.get(name)!.add(result.body);
    }
  }
  agent.destroy();

  const allBodies = new Set(names.flatMap((name) => [...bodies.get(name)!]));
  assert.equal(allBodies.size, 1, `the bodies differ: ${[...allBodies].join(' / ')}`);

  const medians = Object.fromEntries(names.map((name) => [name, median(times.get(name)!)]));
  const noise = Math.abs(medians['unknown user']! - medians['unknown user (again)']!);
  console.log(
    `auth timing over ${SAMPLES} interleaved requests each: ` +
      names.map((name) => `${name} median ${(medians[name]! * 1000).toFixed(1)} µs`).join(', ') +
      `; same-case noise ${(noise * 1000).toFixed(1)} µs`,
  );
  // "Within noise": the gap between the two cases may not exceed a few times the gap between two runs of one case, nor 10% of the median (four test files share two cores in npm test).
  const tolerance = Math.max(4 * noise, 0.1 * medians['unknown user']!);
  for (const [unknownUser, wrongKey] of [
    ['unknown user', 'wrong key'],
    ['unknown user, existing key id', 'wrong key, existing key id'],
  ] as const) {
    const gap = Math.abs(medians[unknownUser]! - medians[wrongKey]!);
    assert.ok(gap <= tolerance, `'${wrongKey}' differs from '${unknownUser}' by ${(gap * 1000).toFixed(1)} µs, more than the ${(tolerance * 1000).toFixed(1)} µs of noise`);
  }
});
