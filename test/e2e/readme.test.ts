// Runs the README's commands against a real server and checks they print what the README says they print.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { demoAccounts } from '../../src/sandbox/demo-accounts.ts';
import { adminUrlOf } from './admin/admin-support.ts';
import { createWorkspace, MAIN, REPO_ROOT, startServer, type ServerProcess, type Workspace } from '../support/server-process.ts';

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

/** Shell blocks, each with the json or text block that follows it as its expected output. */
function examples(markdown: string): Example[] {
  const all = blocks(markdown);
  const found: Example[] = [];
  all.forEach((block, index) => {
    if (block.lang !== 'sh' || block.body.includes('npm install')) return;
    const next = all[index + 1];
    found.push(next !== undefined && (next.lang === 'json' || next.lang === 'text') ? { command: block.body, expected: next } : { command: block.body });
  });
  return found;
}

/** Runs the examples in one bash session (so KEY carries over), with `npx account-api` running this checkout. */
function runExamples(workspace: Workspace, server: ServerProcess, shownBase: string, list: readonly Example[]): string[] {
  const marker = '@@readme-example@@';
  const script = [
    'set -u',
    `npx() { if [ "$1" = account-api ]; then shift; "${process.execPath}" "${MAIN}" "$@"; else command npx "$@"; fi; }`,
    ...list.flatMap((example) => [`echo '${marker}'`, example.command.replaceAll(shownBase, server.url)]),
  ].join('\n');
  // A time limit, so that a process left running in the background (the webhook receiver) cannot hang the test.
  const result = spawnSync('bash', ['-c', script], { cwd: workspace.dir, env: workspace.env, encoding: 'utf8', timeout: 120_000, killSignal: 'SIGKILL' });
  assert.equal(result.status, 0, `the README's commands failed:\n${result.stderr}`);
  return result.stdout.split(`${marker}\n`).slice(1);
}

function checkOutputs(list: readonly Example[], outputs: readonly string[]): number {
  let checked = 0;
  list.forEach((example, index) => {
    if (example.expected === undefined) return;
    const actual = outputs[index] ?? '';
    const where = `README example:\n${example.command}`;
    if (example.expected.lang === 'json') {
      assert.deepEqual(JSON.parse(actual), JSON.parse(example.expected.body), where);
    } else {
      assert.equal(actual.trimEnd(), example.expected.body.trimEnd(), where);
    }
    checked++;
  });
  return checked;
}

test('the README gives the two newcomer commands', () => {
  assert.match(README, /^npm install && npm start$/m);
  assert.match(README, /^npm install && npm test$/m);
});

test("the README's curl walk-through prints exactly what the README shows", async () => {
  const workspace = createWorkspace({ LOG_LEVEL: 'warn' });
  const server = await startServer(workspace);
  try {
    const list = examples(section('Start here') + section('A walk through every endpoint'));
    const outputs = runExamples(workspace, server, 'http://localhost:8080', list);
    const checked = checkOutputs(list, outputs);
    assert.ok(checked >= 12, `expected at least 12 documented outputs, checked ${checked}`);
    for (const path of ['/hello', '/user', '/settings', '/settings/timezones']) {
      assert.ok(list.some((example) => example.command.includes(`/api/v0${path} `) || example.command.endsWith(`/api/v0${path}\n`)), `the walk-through never calls ${path}`);
    }
  } finally {
    await server.stop();
    workspace.cleanup();
  }
});

test('the sandbox keys in the README are the ones the sandbox seeds, and its example works', async () => {
  const sandbox = section('The sandbox');
  for (const demo of demoAccounts()) {
    assert.ok(sandbox.includes(`| \`${demo.username}\` | ${demo.premium ? 'yes' : 'no'} | \`${demo.key.token}\` |`), `README's key for ${demo.username} is not ${demo.key.token}`);
  }
  const workspace = createWorkspace({ LOG_LEVEL: 'warn' });
  const server = await startServer(workspace, ['--sandbox']);
  try {
    const list = examples(sandbox);
    assert.equal(checkOutputs(list, runExamples(workspace, server, 'http://localhost:8081', list)), 1);
  } finally {
    await server.stop();
    workspace.cleanup();
  }
});

test("the README's admin API walk-through prints exactly what the README shows", async () => {
  const workspace = createWorkspace({ LOG_LEVEL: 'warn', ADMIN_PORT: '0' });
  const server = await startServer(workspace);
  try {
    const adminBase = adminUrlOf(server).replace(/\/admin\/v0$/, '');
    const list = examples(section('The admin API')).map((example) => ({ ...example, command: example.command.replaceAll('http://127.0.0.1:8082', adminBase) }));
    const checked = checkOutputs(list, runExamples(workspace, server, 'http://localhost:8080', list));
    assert.ok(checked >= 7, `expected at least 7 documented outputs, checked ${checked}`);
  } finally {
    await server.stop();
    workspace.cleanup();
  }
});

/** A port nobody listens on right now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test("the README's webhook walk-through: its receiver verifies a real delivery with standardwebhooks", async () => {
  const webhooks = section('Webhooks');
  const receiverCode = blocks(webhooks).find((block) => block.lang === 'js');
  assert.ok(receiverCode, 'the Webhooks section shows a receiver');
  // Beside the repository's node_modules, so that `import 'standardwebhooks'` finds the package as a reader's project would.
  const dir = join(REPO_ROOT, 'node_modules', '.cache', 'account-api-readme');
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const receiverPath = join(dir, `receiver-${port}.mjs`);
  writeFileSync(receiverPath, receiverCode.body.replace("listen(9000, '127.0.0.1')", `listen(${port}, '127.0.0.1')`));
  const workspace = createWorkspace({ LOG_LEVEL: 'warn', WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_POLL_INTERVAL_MS: '100' });
  const server = await startServer(workspace);
  try {
    const list = examples(webhooks).map((example, index) => ({
      ...example,
      command:
        (index === 0 ? `node() { if [ "$1" = receiver.mjs ]; then shift; exec "${process.execPath}" "${receiverPath}" "$@"; else command node "$@"; fi; }\n` : '') +
        example.command.replaceAll('127.0.0.1:9000', `127.0.0.1:${port}`),
    }));
    assert.equal(checkOutputs(list, runExamples(workspace, server, 'http://localhost:8080', list)), 2);
  } finally {
    await server.stop();
    workspace.cleanup();
  }
});
