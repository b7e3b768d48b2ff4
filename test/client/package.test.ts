// The client as people install it: `npm pack`, installed into a fresh project, run on the machine's Node 20 and the project's
// Node 24 against a real server, and type-checked through its published .d.ts.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { accessSync, constants, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, before, test } from 'node:test';
import { createAccount, createWorkspace, REPO_ROOT, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function run(command: string, args: readonly string[], cwd: string): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, npm_config_update_notifier: 'false' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

async function runOk(command: string, args: readonly string[], cwd: string): Promise<string> {
  const result = await run(command, args, cwd);
  assert.equal(result.code, 0, `${command} ${args.join(' ')} exited ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  return result.stdout;
}

/**
 * The machine's own Node 20, found on PATH by asking each `node` its version: under `npm test` the first `node` on PATH is
 * the project's Node 24 (npm puts node_modules/.bin first), so `which node` would not do.
 */
async function findNode20(): Promise<string | undefined> {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'node');
    try {
      accessSync(candidate, constants.X_OK);
    } catch {
      continue;
    }
    const { code, stdout } = await run(candidate, ['--version'], tmpdir());
    if (code === 0 && stdout.startsWith('v20.')) return candidate;
  }
  return undefined;
}

// What a user's first program does: anonymous and authenticated calls, and a failure caught as the client's typed error.
const PROGRAM = `
import { AccountApiClient, AccountApiError } from '@account-api/client';
const [baseUrl, username, apiKey] = process.argv.slice(2);
const anonymous = new AccountApiClient({ baseUrl });
const client = new AccountApiClient({ baseUrl, username, apiKey });
let failure;
try {
  await client.updateSettings({ timezone: 'europe/kyiv' });
} catch (error) {
  failure = { isAccountApiError: error instanceof AccountApiError, name: error.name, status: error.status, code: error.code, field: error.field };
}
console.log(JSON.stringify({
  node: process.version,
  anonymous: await anonymous.hello(),
  hello: await client.hello(),
  user: await client.getUser(),
  failure,
}));
`;

// CommonJS programs reach the ESM package through require(esm), where the Node has it (20.19+, 22.12+, 24).
const COMMONJS_PROGRAM = `
if (!process.features.require_module) console.log(JSON.stringify({ requireModule: false }));
else console.log(JSON.stringify({ requireModule: true, client: typeof require('@account-api/client').AccountApiClient }));
`;

const TYPED_PROGRAM = `
import { AccountApiClient, AccountApiError, AdminClient, verifyWebhook, type ErrorCode, type User, type WebhookEvent } from '@account-api/client';
const client = new AccountApiClient({ baseUrl: 'http://127.0.0.1:8080', username: 'alice', apiKey: 'aapi_live_x', retries: 1 });
export const user: Promise<User> = client.getUser();
export const admin = new AdminClient({ baseUrl: 'http://127.0.0.1:8082', token: 'aadm_x' });
export function codeOf(error: unknown): ErrorCode | undefined {
  return error instanceof AccountApiError ? error.code : undefined;
}
export const event = (body: string): WebhookEvent => verifyWebhook('whsec_x', body, new Headers());
`;

const MISTYPED_PROGRAM = `
import { AccountApiClient } from '@account-api/client';
const client = new AccountApiClient({ baseUrl: 'http://127.0.0.1:8080' });
export const user = client.getUsr();
export const other = new AccountApiClient({ timeout: 5 });
`;

let workspace: Workspace;
let server: ServerProcess;
let alice: Account;
let consumer: string;
let installed: string;

before(async () => {
  workspace = createWorkspace();
  alice = await createAccount(workspace, 'alice', { name: 'Alice' });
  server = await startServer(workspace);

  // npm pack runs the package's prepack script, so the tarball holds a build of the current source.
  const packed = join(workspace.dir, 'packed');
  mkdirSync(packed);
  await runOk('npm', ['pack', '--pack-destination', packed], join(REPO_ROOT, 'client'));
  const [tarball, ...more] = readdirSync(packed);
  assert.ok(tarball !== undefined && more.length === 0, `npm pack should make one tarball; made ${readdirSync(packed).join(', ')}`);

  consumer = mkdtempSync(join(tmpdir(), 'account-api-consumer-'));
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  // The package has no dependencies, so installing it needs nothing from the network.
  await runOk('npm', ['install', '--offline', '--no-audit', '--no-fund', join(packed, tarball)], consumer);
  installed = join(consumer, 'node_modules', '@account-api', 'client');
  writeFileSync(join(consumer, 'program.mjs'), PROGRAM);
  writeFileSync(join(consumer, 'program.cjs'), COMMONJS_PROGRAM);
  writeFileSync(join(consumer, 'typed.ts'), TYPED_PROGRAM);
  writeFileSync(join(consumer, 'mistyped.ts'), MISTYPED_PROGRAM);
});

after(async () => {
  await server?.stop();
  workspace?.cleanup();
  if (consumer !== undefined) rmSync(consumer, { recursive: true, force: true });
});

test('the tarball holds compiled JavaScript and .d.ts, no TypeScript source, and has no dependencies', () => {
  const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
  assert.equal(manifest.dependencies, undefined, 'no runtime dependencies');
  assert.equal(manifest.peerDependencies, undefined, 'no peer dependencies');
  assert.deepEqual(manifest.exports['.'], { types: './dist/index.d.ts', default: './dist/index.js' });
  assert.deepEqual(readdirSync(installed).sort(), ['README.md', 'dist', 'package.json']);
  const dist = readdirSync(join(installed, 'dist'));
  assert.ok(dist.includes('index.js') && dist.includes('index.d.ts'), `dist holds: ${dist.join(', ')}`);
  assert.deepEqual(dist.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts')), [], 'no TypeScript source is shipped');
  // tsc leaves ./x.ts in declarations (microsoft/TypeScript#61037); the shipped ones must name files the package has.
  for (const file of dist.filter((name) => name.endsWith('.d.ts'))) {
    const text = readFileSync(join(installed, 'dist', file), 'utf8');
    assert.doesNotMatch(text, /['"]\.{1,2}\/[^'"]*\.ts['"]/, `${file} imports a .ts file that the package does not ship`);
  }
});

/** Runs the installed package's first program on `node` and checks every answer against the spec. */
async function expectProgramWorks(node: string, version: RegExp): Promise<void> {
  const output = JSON.parse(await runOk(node, ['program.mjs', server.url, alice.username, alice.key], consumer));
  assert.match(output.node, version);
  assert.deepEqual(output.anonymous, { name: 'World' });
  assert.deepEqual(output.hello, { name: 'Alice' });
  assert.ok(Number.isSafeInteger(output.user.user_id), `user_id should be an integer: ${output.user.user_id}`);
  assert.deepEqual(output.user, { user_id: output.user.user_id, username: 'alice', name: 'Alice', timezone: 'UTC' });
  assert.deepEqual(output.failure, { isAccountApiError: true, name: 'AccountApiError', status: 400, code: 'invalid_timezone', field: 'timezone' });

  const commonjs = JSON.parse(await runOk(node, ['program.cjs'], consumer));
  if (commonjs.requireModule) assert.deepEqual(commonjs, { requireModule: true, client: 'function' });
}

test("the installed package runs on the machine's own Node 20", async (t) => {
  const node20 = await findNode20();
  if (node20 === undefined) {
    // A CI machine is set up to have one: there a missing Node 20 is a failure, not a reason to skip.
    assert.notEqual(process.env.CI, 'true', 'CI must provide a Node 20 on PATH for this test');
    t.skip('no Node 20 on PATH');
    return;
  }
  await expectProgramWorks(node20, /^v20\./);
});

test("the installed package runs on the project's Node 24", async () => {
  assert.match(process.version, /^v24\./, 'the tests run on the project’s Node 24');
  await expectProgramWorks(process.execPath, /^v24\./);
});

const TSC = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
// A consumer's strict NodeNext project, checking the package's .d.ts too (no skipLibCheck); Node's types are the project's.
const TSC_FLAGS = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022'];
const TYPES_FLAGS = ['--types', 'node', '--typeRoots', join(REPO_ROOT, 'node_modules', '@types')];

test('a TypeScript program compiles against the installed package’s types', async () => {
  await runOk(process.execPath, [TSC, ...TSC_FLAGS, ...TYPES_FLAGS, 'typed.ts'], consumer);
});

test('a misspelt method or option in a TypeScript program fails to compile against the installed package', async () => {
  const result = await run(process.execPath, [TSC, ...TSC_FLAGS, ...TYPES_FLAGS, 'mistyped.ts'], consumer);
  assert.notEqual(result.code, 0, `tsc accepted a misspelt method:\n${result.stdout}`);
  assert.match(result.stdout, /mistyped\.ts\(4,\d+\): error TS2551: Property 'getUsr' does not exist on type 'AccountApiClient'/);
  assert.match(result.stdout, /mistyped\.ts\(5,\d+\): error TS2561: .*'timeout' does not exist in type 'AccountApiClientOptions'/);
  assert.doesNotMatch(result.stdout, /node_modules/, 'the package’s own declarations have no errors');
});
