// `account-api serve` where it cannot listen (a port taken), and what its start banner says about where it listens (issue 36).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { after, before, test } from 'node:test';
import { createWorkspace, describeRun, runCli, startServer, type Workspace } from '../support/server-process.ts';

let workspace: Workspace;
let holder: Server;
let taken: number;

before(async () => {
  workspace = createWorkspace();
  // Another process's port, as far as the server can tell.
  holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  taken = (holder.address() as { port: number }).port;
});

after(async () => {
  await new Promise((resolve) => holder?.close(resolve));
  workspace?.cleanup();
});

const CASES: ReadonlyArray<readonly [string, readonly string[], NodeJS.ProcessEnv, string]> = [
  ['the public port', ['--port', 'TAKEN'], {}, 'PORT'],
  ['the admin port', ['--port', '0'], { ADMIN_PORT: 'TAKEN', ADMIN_HOST: '127.0.0.1' }, 'ADMIN_PORT'],
  ['the metrics port', ['--port', '0'], { METRICS_PORT: 'TAKEN', METRICS_HOST: '127.0.0.1' }, 'METRICS_PORT'],
];

for (const [what, flags, variables, setting] of CASES) {
  test(`${what} taken: one line on stderr naming the port and ${setting}, exit 1`, async () => {
    const fill = (value: string) => (value === 'TAKEN' ? String(taken) : value);
    const args = ['serve', '--host', '127.0.0.1', ...flags.map(fill)];
    const env = Object.fromEntries(Object.entries(variables).map(([name, value]) => [name, fill(value ?? '')]));
    const result = await runCli(workspace, args, env);
    assert.equal(result.code, 1, describeRun(args, result));
    const lines = result.stderr.split('\n').filter((line) => line !== '');
    assert.equal(lines.length, 1, `one line on stderr, no stack trace; ${describeRun(args, result)}`);
    assert.match(lines[0]!, new RegExp(`^account-api: port ${taken}\\b`));
    assert.match(lines[0]!, new RegExp(`\\b${setting}\\b`), `the line should name ${setting}`);
    assert.doesNotMatch(lines[0]!, /unexpected failure|EADDRINUSE/);
  });
}

test('an address that is not this machine\'s: one line naming it and HOST, exit 1', async () => {
  // 192.0.2.1 is TEST-NET-1 (RFC 5737), assigned to no machine: binding it fails locally, nothing is sent.
  const args = ['serve', '--host', '192.0.2.1', '--port', '0'];
  const result = await runCli(workspace, args);
  assert.equal(result.code, 1, describeRun(args, result));
  const lines = result.stderr.split('\n').filter((line) => line !== '');
  assert.equal(lines.length, 1, `one line on stderr, no stack trace; ${describeRun(args, result)}`);
  assert.match(lines[0]!, /^account-api: address 192\.0\.2\.1\b/);
  assert.match(lines[0]!, /\bHOST\b/);
  assert.doesNotMatch(lines[0]!, /unexpected failure|EADDRNOTAVAIL/);
});

test('the banner names the address the server is bound to: 0.0.0.0 as every interface, with the URL for this machine', async () => {
  const server = await startServer(workspace, ['--host', '0.0.0.0']);
  try {
    const banner = server.output.find((line) => line.startsWith('account-api listening at '));
    const port = new URL(server.url).port;
    assert.ok(banner?.startsWith(`account-api listening at http://0.0.0.0:${port} `), `the banner should name 0.0.0.0: ${banner}`);
    assert.match(banner!, /every IPv4 interface/);
    assert.match(banner!, new RegExp(`from this machine: http://localhost:${port}$`));
  } finally {
    await server.stop();
  }
});

test('bound to 127.0.0.1, the banner says so, and nothing about other machines', async () => {
  const server = await startServer(workspace);
  try {
    const banner = server.output.find((line) => line.startsWith('account-api listening at '));
    assert.match(banner ?? '', /^account-api listening at http:\/\/127\.0\.0\.1:\d+ \(live, sqlite\)$/);
  } finally {
    await server.stop();
  }
});
