// Sends generated hostile requests to a real server: every answer must be a documented envelope, never a 5xx, never a crash.
// FUZZ_REQUESTS sets how many (default 100,000; `npm run fuzz` runs a million), FUZZ_SEED replays a run.
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { call } from '../support/http.ts';
import { createAccount, createWorkspace, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';
import { documentedCodes, problemWith, type Answer } from './envelope-check.ts';
import { fuzzRequest, type FuzzRequest } from './fuzz-requests.ts';

const TOTAL = Number(process.env.FUZZ_REQUESTS ?? 100_000);
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const CONCURRENCY = Number(process.env.FUZZ_CONCURRENCY ?? 16);
const BATCH = 2000;

let workspace: Workspace;
let server: ServerProcess;
let alice: Account;
let bob: Account;

before(async () => {
  // Shedding and budgets off: this test looks for wrong answers, not for the limits (which have tests of their own).
  // Logs at info: every request's log line is scanned for secrets afterwards.
  workspace = createWorkspace({ LOG_LEVEL: 'info', MAX_EVENT_LOOP_DELAY_MS: '0' });
  alice = await createAccount(workspace, 'alice', { name: 'Alice' });
  bob = await createAccount(workspace, 'bob', { premium: false });
  server = await startServer(workspace);
});

after(async () => {
  await server.stop();
  workspace.cleanup();
});

function send(agent: Agent, base: URL, fuzz: FuzzRequest): Promise<Answer> {
  return new Promise((resolve, reject) => {
    // Content-Length always: Node's client frames no body on DELETE or OPTIONS by itself, and unframed bytes would read as a new request.
    const headers = fuzz.body === null ? fuzz.headers : { ...fuzz.headers, 'content-length': String(fuzz.body.length) };
    const outgoing = request(
      { agent, host: base.hostname, port: base.port, method: fuzz.method, path: fuzz.path, headers },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            method: fuzz.method,
            status: response.statusCode ?? 0,
            contentType: response.headers['content-type'],
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(fuzz.body ?? undefined);
  });
}

test(`${TOTAL} generated requests all get documented answers (seed ${SEED})`, async () => {
  const codes = documentedCodes();
  const base = new URL(server.url);
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const generator = fuzzRequest({ username: alice.username, key: alice.key, otherKey: bob.key });
  const statuses = new Map<number, number>();
  let sent = 0;
  let transportErrors = 0;
  for (let offset = 0; offset < TOTAL; offset += BATCH) {
    const batch = fc.sample(generator, { numRuns: Math.min(BATCH, TOTAL - offset), seed: SEED + offset });
    let next = 0;
    const worker = async () => {
      while (next < batch.length) {
        const fuzz = batch[next++]!;
        let answer: Answer;
        try {
          answer = await send(agent, base, fuzz);
        } catch (error) {
          // The server may close a connection it refuses (for example after a 413); the request is then retried once.
          transportErrors++;
          answer = await send(agent, base, fuzz);
        }
        sent++;
        if (process.env.FUZZ_TRACE) console.log(JSON.stringify([fuzz.method, fuzz.path, fuzz.headers, fuzz.body?.toString("base64"), answer.status]));
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        // The OpenAPI document is the one answer that is not an envelope: it is a standard document of its own.
        const isDocument = answer.status === 200 && /^\/api\/v0\/openapi\.json\/?(\?|#|$)/.test(fuzz.path) && fuzz.method !== 'HEAD';
        const problem = isDocument ? (answer.body.includes('"openapi":"3.1.0"') ? undefined : 'an OpenAPI document without its version') : problemWith(answer, codes);
        assert.equal(problem, undefined, `${problem} for ${fuzz.method} ${fuzz.path} ${JSON.stringify(fuzz.headers)} body ${fuzz.body?.subarray(0, 200).toString('latin1')}\n-> ${answer.status} ${answer.body.slice(0, 300)}\n(replay with FUZZ_SEED=${SEED})`);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  }
  agent.destroy();
  const summary = [...statuses.entries()].sort(([a], [b]) => a - b).map(([status, count]) => `${status}: ${count}`).join(', ');
  console.log(`fuzz: ${sent} requests (seed ${SEED}), statuses ${summary}; ${transportErrors} retried after the server closed a connection`);
  assert.equal(sent, TOTAL);

  // Nothing secret reached the logs: neither key, nor the Basic credentials that carried them.
  const logs = server.output.join('\n');
  for (const [account, key] of [[alice.username, alice.key], [bob.username, bob.key], [alice.username, bob.key], ['nobody', alice.key]] as const) {
    for (const secret of [key, key.slice(-38), Buffer.from(`${account}:${key}`).toString('base64')]) {
      assert.ok(!logs.includes(secret), `a secret (${secret.slice(0, 14)}...) appears in the server's logs`);
    }
  }
  console.log(`fuzz logs: ${server.output.length} lines scanned for keys and credentials, none found`);

  // Alive and still correct afterwards.
  assert.equal((await call('GET', `${server.api}/hello`)).status, 200);
  const user = await call('GET', `${server.api}/user`, { auth: alice });
  assert.equal(user.status, 200);
  assert.equal(user.body.data.username, 'alice');
});
