// Runs the README top to bottom as one reader's session, against real servers, and checks every command prints what the README says.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { demoAccounts } from '../../src/sandbox/demo-accounts.ts';
import { adminUrlOf } from './admin/admin-support.ts';
import { createWorkspace, REPO_ROOT, startServer } from '../support/server-process.ts';

interface Block {
  readonly lang: string;
  readonly body: string;
}

interface Example {
  readonly command: string;
  /** The block shown right after the command, if it is its output. */
  readonly expected?: Block;
}

const README = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');

function section(heading: string): string {
  const start = README.indexOf(`\n## ${heading}\n`);
  assert.notEqual(start, -1, `README has no section '## ${heading}'`);
  const end = README.indexOf('\n## ', start + 1);
  return README.slice(start, end === -1 ? undefined : end);
}

function blocks(markdown: string): Block[] {
  return [...markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((match) => ({ lang: match[1]!, body: match[2]! }));
}

/**
 * The blocks a reader runs against the service, in order, each with the json or text block that follows it as its expected
 * output. Installing, starting the servers (npm start and npm run sandbox: the test starts them) and running the tests are the
 * reader's own terminal, not the walk-through; those blocks are left out, and named, so that nothing else is left out unnoticed.
 */
function walkThrough(markdown: string): { examples: Example[]; skipped: string[] } {
  const all = blocks(markdown);
  const examples: Example[] = [];
  const skipped: string[] = [];
  all.forEach((block, index) => {
    if (block.lang !== 'sh') return;
    if (/npm install|node --test/.test(block.body)) {
      skipped.push(block.body.trim());
      return;
    }
    const next = all[index + 1];
    examples.push(next !== undefined && (next.lang === 'json' || next.lang === 'text') ? { command: block.body, expected: next } : { command: block.body });
  });
  return { examples, skipped };
}

/** A port nobody listens on right now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Session {
  readonly status: number | null;
  readonly stderr: string;
  /** Per example: what it printed, and the exit status of its last command. */
  readonly outputs: { readonly text: string; readonly status: number }[];
}

const MARKER = '@@readme-example@@';

/** Runs the examples in one bash session (so KEY, ADMIN_TOKEN and the rest carry over, as in a reader's terminal). */
function runSession(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Session> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    // Only against a hang (a receiver left running would keep the pipes open): how long the session takes is not asserted.
    const guard = setTimeout(() => child.kill('SIGKILL'), 15 * 60_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(guard);
      // Not at a line's start: most curl answers end without a newline. Split, the captured statuses fall at odd places.
      const parts = stdout.split(new RegExp(`${MARKER} (\\d+)\n`));
      const outputs: { status: number; text: string }[] = [];
      for (let index = 1; index < parts.length; index += 2) outputs.push({ status: Number(parts[index]), text: parts[index + 1] ?? '' });
      // Each marker carries the status of the example before it: shift them onto their own examples.
      resolve({ status, stderr, outputs: outputs.slice(0, -1).map((output, index) => ({ text: output.text, status: outputs[index + 1]!.status })) });
    });
  });
}

/** Request ids are fresh on every run; the README shows one. */
function withoutRequestIds(text: string): string {
  return text.replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, '<request id>');
}

test('the README gives the two newcomer commands', () => {
  assert.match(README, /^npm install && npm start$/m);
  assert.match(README, /^npm install && npm test$/m);
});

test('the sandbox keys in the README are the ones the sandbox seeds', () => {
  const sandbox = section('The sandbox');
  for (const demo of demoAccounts()) {
    assert.ok(sandbox.includes(`| \`${demo.username}\` | ${demo.premium ? 'yes' : 'no'} | \`${demo.key.token}\` |`), `README's key for ${demo.username} is not ${demo.key.token}`);
  }
});

test('the README, followed top to bottom in one session, prints exactly what it shows', async () => {
  const { examples, skipped } = walkThrough(README);
  assert.deepEqual(skipped, ['npm install && npm start', 'npm install && npm test', 'npx node --test test/e2e/user.test.ts'], 'blocks the walk-through leaves out');

  // The receiver of the Webhooks section, beside the repository's node_modules so that `import 'standardwebhooks'` resolves as in
  // a reader's project, on a free port rather than 9000.
  const receiverCode = blocks(section('Webhooks')).find((block) => block.lang === 'js');
  assert.ok(receiverCode, 'the Webhooks section shows a receiver');
  const receiverPort = await freePort();
  const dir = join(REPO_ROOT, 'node_modules', '.cache', 'account-api-readme');
  mkdirSync(dir, { recursive: true });
  const receiverPath = join(dir, `receiver-${receiverPort}.mjs`);
  writeFileSync(receiverPath, receiverCode.body.replace("listen(9000, '127.0.0.1')", `listen(${receiverPort}, '127.0.0.1')`));

  // One live server with what the README asks of it along the way (ADMIN_PORT for the admin API, WEBHOOK_ALLOW_PRIVATE for the
  // receiver on this machine), and the sandbox beside it, as `npm start` and `npm run sandbox` would run them.
  const workspace = createWorkspace({ LOG_LEVEL: 'warn', ADMIN_PORT: '0', WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_POLL_INTERVAL_MS: '100' });
  const [live, sandbox] = await Promise.all([startServer(workspace), startServer(workspace, ['--sandbox'])]);
  try {
    const adminBase = adminUrlOf(live).replace(/\/admin\/v0$/, '');
    // The README's addresses, as this test's servers have them.
    const local = (command: string) =>
      command
        .replaceAll('http://localhost:8080', live.url)
        .replaceAll('http://localhost:8081', sandbox.url)
        .replaceAll('http://127.0.0.1:8082', adminBase)
        .replaceAll('127.0.0.1:9000', `127.0.0.1:${receiverPort}`)
        // A reader's pause for the delivery; here, a wait until it was recorded (after the receiver printed it), so that a busy
        // machine cannot make it late.
        .replace(
          /; sleep 2$/m,
          `\nuntil ./account-api webhooks deliveries "$(./account-api webhooks list --json | jq -r '.[0].endpoint_id')" --json | grep -q '"status": 204'; do sleep 0.2; done`,
        )
        // The repository's own script, as a reader in the repository runs it.
        .replaceAll('./account-api', `"${join(REPO_ROOT, 'account-api')}"`);
    const stray = examples.map((example) => local(example.command)).filter((command) => command.includes('localhost'));
    assert.deepEqual(stray, [], 'a README command would still call localhost, where some other server may listen');
    const script = [
      'set -u',
      `node() { if [ "$1" = receiver.mjs ]; then shift; exec "${process.execPath}" "${receiverPath}" "$@"; else command node "$@"; fi; }`,
      ...examples.flatMap((example) => [`echo "${MARKER} $?"`, local(example.command)]),
      `echo "${MARKER} $?"`,
    ].join('\n');
    // call --sandbox goes to ACCOUNT_API_SANDBOX_URL, by default http://localhost:8081: here, this test's sandbox.
    const session = await runSession(script, workspace.dir, { ...workspace.env, ACCOUNT_API_SANDBOX_URL: sandbox.url });
    assert.equal(session.outputs.length, examples.length, `the session stopped early (exit ${session.status}):\n${session.stderr}`);

    let checked = 0;
    examples.forEach((example, index) => {
      const { text, status } = session.outputs[index]!;
      const where = `README example:\n${example.command}`;
      assert.equal(status, 0, `${where}\nexited ${status}; the session's stderr:\n${session.stderr}`);
      if (example.expected === undefined) return;
      if (example.expected.lang === 'json') {
        assert.deepEqual(JSON.parse(text), JSON.parse(example.expected.body), where);
      } else {
        assert.equal(withoutRequestIds(text.trimEnd()), withoutRequestIds(example.expected.body.trimEnd()), where);
      }
      checked++;
    });
    assert.ok(checked >= 30, `expected at least 30 documented outputs, checked ${checked}`);
    for (const path of ['/hello', '/user', '/settings', '/settings/timezones']) {
      assert.ok(examples.some((example) => example.command.includes(`/api/v0${path} `) || example.command.endsWith(`/api/v0${path}\n`)), `the walk-through never calls ${path}`);
    }
  } finally {
    await Promise.all([live.stop(), sandbox.stop()]);
    workspace.cleanup();
  }
});
