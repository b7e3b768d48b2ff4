// Many requests with ever-new credentials, addresses and request ids must leave the server's memory flat: no unbounded map or cache.
// MEMORY_REQUESTS sets how many (default 100,000; `npm run soak` sends a million).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { after, before, test } from 'node:test';
import { issueKey } from '../../src/domain/api-keys.ts';
import { basic } from '../support/http.ts';
import { createAccount, createWorkspace, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';

const TOTAL = Number(process.env.MEMORY_REQUESTS ?? 100_000);
const CONCURRENCY = 16;
const CHECKPOINTS = 10;

let workspace: Workspace;
let server: ServerProcess;
const accounts: Account[] = [];

before(async () => {
  // Each request claims a new client address through the trusted proxy header, so per-address state is exercised too.
  // A small old-space cap makes V8 collect eagerly, so resident memory tracks live data instead of how lazily the heap grows;
  // a real leak then shows as growth (or as the server dying of it).
  workspace = createWorkspace({
    LOG_LEVEL: 'warn',
    TRUST_PROXY: '127.0.0.1',
    MAX_EVENT_LOOP_DELAY_MS: '0',
    NODE_OPTIONS: '--max-old-space-size=96',
  });
  for (const name of ['alice', 'bob', 'carol']) accounts.push(await createAccount(workspace, name));
  server = await startServer(workspace);
});

after(async () => {
  await server.stop();
  workspace.cleanup();
});

function residentMegabytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((entry) => entry.startsWith('VmRSS:'));
  return Number(line?.split(/\s+/)[1]) / 1024;
}

function get(agent: Agent, url: URL, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { agent, headers }, (response) => {
      response.resume().on('end', () => resolve(response.statusCode ?? 0));
    });
    outgoing.on('error', reject).end();
  });
}

/** The i-th request: a valid key, a never-issued key, an unknown user or garbage, from the i-th address, with the i-th request id. */
function headersFor(i: number): Record<string, string> {
  const account = accounts[i % accounts.length]!;
  const variants = [
    () => basic(account.username, account.key),
    () => basic(account.username, issueKey('live').token),
    () => basic(`user${i}`, issueKey('live').token),
    () => basic(`user${i}`, `not-a-key-${i}`),
  ];
  return {
    authorization: variants[i % variants.length]!(),
    'x-forwarded-for': `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
    'x-request-id': `memory-test-${i}`,
  };
}

test(`${TOTAL} requests with varied credentials leave memory flat`, async () => {
  const pid = server.child.pid!;
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const paths = ['/user', '/hello', '/settings'].map((path) => new URL(`${server.api}${path}`));
  const samples: number[] = [];
  const statuses = new Map<number, number>();
  let next = 0;
  const perCheckpoint = Math.ceil(TOTAL / CHECKPOINTS);
  for (let checkpoint = 0; checkpoint < CHECKPOINTS; checkpoint++) {
    const end = Math.min(TOTAL, next + perCheckpoint);
    const worker = async () => {
      while (next < end) {
        const i = next++;
        const status = await get(agent, paths[i % paths.length]!, headersFor(i));
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    samples.push(residentMegabytes(pid));
  }
  agent.destroy();

  const summary = [...statuses.entries()].sort(([a], [b]) => a - b).map(([status, count]) => `${status}: ${count}`).join(', ');
  console.log(`memory: ${TOTAL} requests (${summary}); resident MB at each tenth: ${samples.map((mb) => mb.toFixed(1)).join(', ')}`);
  assert.ok(!statuses.has(500), 'no request may fail with 500');
  assert.equal(server.child.exitCode, null, 'the server ran out of memory');
  // After the first fifth (JIT, pools and caches warming up), memory may wander but not climb.
  const settled = samples[1]!;
  const last = samples.at(-1)!;
  const allowed = Math.max(25, settled * 0.25);
  assert.ok(last - settled <= allowed, `resident memory grew from ${settled.toFixed(1)} MB to ${last.toFixed(1)} MB (allowed ${allowed.toFixed(1)} MB)`);
});
