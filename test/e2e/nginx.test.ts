// Runs docs/deploy.md's nginx example in front of two real instances, so the documented configuration stays correct.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HANG_MS } from '../support/eventually.ts';
import { call } from '../support/http.ts';
import { freePort } from '../support/redis.ts';
import { createAccount, createWorkspace, REPO_ROOT, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';
import { requiring } from '../support/requiring.ts';

function nginxSkipReason(): string | undefined {
  if (spawnSync('nginx', ['-v']).error === undefined) return undefined;
  const reason = 'nginx is not installed (apt-get install nginx-light)';
  if (process.env.CI) throw new Error(`${reason}; .ci/run installs it and CI must run this test`);
  return reason;
}

const skip = nginxSkipReason();
const { after, before, describe, test } = requiring(skip);

function documentedConfig(): string {
  const doc = readFileSync(join(REPO_ROOT, 'docs/deploy.md'), 'utf8');
  const block = /```nginx\n([\s\S]*?)```/.exec(doc)?.[1];
  assert.ok(block !== undefined, 'docs/deploy.md has no ```nginx example');
  return block;
}

/** The documented file with the example's machines replaced by this test's instances and port. */
function adapt(config: string, upstreams: readonly string[], port: number): string {
  const servers = [...config.matchAll(/^\s*server (\S+:\d+)/gm)].map((match) => match[1]!);
  assert.equal(servers.length, 2, 'the example should name two instances');
  let adapted = config.replace(/listen 80;/, `listen 127.0.0.1:${port};`);
  servers.forEach((server, index) => (adapted = adapted.replace(server, upstreams[index]!)));
  assert.notEqual(adapted, config);
  return adapted;
}

describe("docs/deploy.md's nginx example", () => {
  let workspace: Workspace;
  let instances: ServerProcess[];
  let nginx: ChildProcess;
  let base: string;
  let alice: Account;

  before(async () => {
    // Both instances trust the loopback proxy (nginx here), as the docs tell operators to set TRUST_PROXY.
    workspace = createWorkspace({ TRUST_PROXY: '127.0.0.1', RATE_LIMIT_AUTH_FAILURES: '2' });
    alice = await createAccount(workspace, 'alice', { name: 'Alice' });
    instances = await Promise.all([startServer(workspace), startServer(workspace)]);
    const port = await freePort();
    const prefix = join(workspace.dir, 'nginx');
    mkdirSync(prefix, { recursive: true });
    const upstreams = instances.map((instance) => new URL(instance.url).host);
    writeFileSync(
      join(prefix, 'nginx.conf'),
      [
        `pid ${prefix}/nginx.pid;`,
        `error_log ${prefix}/error.log warn;`,
        'events { worker_connections 256; }',
        'http {',
        '  access_log off;',
        ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `  ${kind}_temp_path ${prefix}/${kind};`),
        adapt(documentedConfig(), upstreams, port),
        '}',
      ].join('\n'),
    );
    nginx = spawn('nginx', ['-p', prefix, '-c', join(prefix, 'nginx.conf'), '-g', 'daemon off; user root;'], { stdio: 'pipe' });
    base = `http://127.0.0.1:${port}`;
    for (let attempt = 0; ; attempt++) {
      try {
        await fetch(`${base}/healthz`);
        break;
      } catch (error) {
        // A hang detector, not a timing check: a loaded machine may take long to start nginx.
        if (attempt * 50 > HANG_MS) throw new Error(`nginx did not start: ${readFileSync(join(prefix, 'error.log'), 'utf8')}`, { cause: error });
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  });

  after(async () => {
    nginx?.kill('SIGTERM');
    await Promise.all(instances.map((instance) => instance.stop()));
    workspace.cleanup();
  });

  test('spreads requests over both instances, and a write through one is read through the other', async () => {
    const before = instances.map((instance) => instance.output.length);
    for (let i = 0; i < 10; i++) assert.equal((await call('GET', `${base}/api/v0/hello`)).status, 200);
    // Log lines arrive through pipes a moment after the responses: wait for them (HANG_MS at most, a hang detector) before counting.
    const served = () => instances.map((instance, index) => instance.output.slice(before[index]).filter((line) => line.includes('"/api/v0/hello"')).length);
    for (let waited = 0; served().reduce((a, b) => a + b, 0) < 10 && waited < HANG_MS; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(served().every((count) => count > 0), `both instances should serve some of 10 requests; they served ${served().join(' and ')}`);

    const written = await call('POST', `${base}/api/v0/user`, { auth: alice, form: { name: 'Alice via nginx' } });
    assert.equal(written.status, 200);
    for (const instance of instances) {
      const read = await call('GET', `${instance.api}/user`, { auth: alice });
      assert.equal(read.body.data.name, 'Alice via nginx');
    }
  });

  test("the client's own X-Forwarded-For is replaced, so a guesser cannot buy fresh budgets by forging it", async () => {
    const guess = { username: 'alice', key: 'aapi_live_wrong' };
    const statuses = [];
    for (const forged of ['203.0.113.1', '203.0.113.2', '203.0.113.3', '203.0.113.4', '203.0.113.5']) {
      statuses.push((await call('GET', `${base}/api/v0/hello`, { auth: guess, headers: { 'x-forwarded-for': forged } })).status);
    }
    // Two instances each allow 2 failures from 127.0.0.1 (no Redis here): at most 4 guesses, then 429 whatever the header says.
    assert.ok(statuses.includes(429), `forged X-Forwarded-For values bought fresh budgets: ${statuses.join(', ')}`);
  });

  test('keeps serving when one instance stops', async () => {
    await instances[1]!.stop();
    for (let i = 0; i < 6; i++) {
      const result = await call('GET', `${base}/api/v0/hello`);
      assert.equal(result.status, 200, `request ${i + 1} failed with one instance down: ${result.text}`);
    }
  });
});
