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

// A CommonJS program gets the package's CommonJS build through the `require` condition, on every Node 20 (not only 20.19+).
const COMMONJS_PROGRAM = `
console.log(JSON.stringify({ client: typeof require('@account-api/client').AccountApiClient }));
`;

// What a CommonJS TypeScript project (\`module: node16\`, Node 20's common base configuration) writes; tsc compiles the import
// to require(). Its answers are checked as the ESM program's are.
const COMMONJS_TYPED_PROGRAM = `
import { AccountApiClient, AccountApiError, type User } from '@account-api/client';
async function main(): Promise<void> {
  const [baseUrl, username, apiKey] = process.argv.slice(2) as [string, string, string];
  const client = new AccountApiClient({ baseUrl, username, apiKey });
  const user: User = await client.getUser();
  let failure: unknown;
  try {
    await client.updateSettings({ timezone: 'europe/kyiv' });
  } catch (error) {
    failure = error instanceof AccountApiError ? { isAccountApiError: true, code: error.code } : String(error);
  }
  console.log(JSON.stringify({ node: process.version, moduleSystem: typeof require === 'function' ? 'commonjs' : 'esm', user, failure }));
}
void main();
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
/** A CommonJS project inside the consumer (its own package.json), sharing its node_modules. */
let commonjsProject: string;
let packedFiles: string[];

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
  packedFiles = (await runOk('tar', ['-tzf', join(packed, tarball)], packed)).split('\n').filter((line) => line !== '');

  consumer = mkdtempSync(join(tmpdir(), 'account-api-consumer-'));
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  // The package has no dependencies, so installing it needs nothing from the network.
  await runOk('npm', ['install', '--offline', '--no-audit', '--no-fund', join(packed, tarball)], consumer);
  installed = join(consumer, 'node_modules', '@account-api', 'client');
  writeFileSync(join(consumer, 'program.mjs'), PROGRAM);
  writeFileSync(join(consumer, 'program.cjs'), COMMONJS_PROGRAM);
  writeFileSync(join(consumer, 'typed.ts'), TYPED_PROGRAM);
  writeFileSync(join(consumer, 'mistyped.ts'), MISTYPED_PROGRAM);
  commonjsProject = join(consumer, 'commonjs');
  mkdirSync(commonjsProject);
  writeFileSync(join(commonjsProject, 'package.json'), JSON.stringify({ name: 'commonjs-consumer', private: true, type: 'commonjs' }));
  writeFileSync(join(commonjsProject, 'program.ts'), COMMONJS_TYPED_PROGRAM);
});

after(async () => {
  await server?.stop();
  workspace?.cleanup();
  if (consumer !== undefined) rmSync(consumer, { recursive: true, force: true });
});

test('the tarball holds compiled JavaScript and .d.ts (ESM and CommonJS), LICENSE and NOTICE, no TypeScript source, and has no dependencies', () => {
  const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
  assert.equal(manifest.dependencies, undefined, 'no runtime dependencies');
  assert.equal(manifest.peerDependencies, undefined, 'no peer dependencies');
  assert.deepEqual(manifest.exports['.'], {
    import: { types: './dist/index.d.ts', default: './dist/index.js' },
    require: { types: './dist/cjs/index.d.ts', default: './dist/cjs/index.js' },
  });
  assert.deepEqual(readdirSync(installed).sort(), ['LICENSE', 'NOTICE', 'README.md', 'dist', 'package.json']);
  // Apache-2.0, section 4: a copy of the licence, and the NOTICE, with every redistribution.
  for (const file of ['LICENSE', 'NOTICE']) {
    assert.ok(packedFiles.includes(`package/${file}`), `the tarball should hold ${file}: ${packedFiles.join(', ')}`);
    assert.equal(readFileSync(join(installed, file), 'utf8'), readFileSync(join(REPO_ROOT, file), 'utf8'), `${file} should be the repository's`);
  }
  for (const dir of ['dist', 'dist/cjs']) {
    const files = readdirSync(join(installed, dir));
    assert.ok(files.includes('index.js') && files.includes('index.d.ts'), `${dir} holds: ${files.join(', ')}`);
    assert.deepEqual(files.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts')), [], 'no TypeScript source is shipped');
    // tsc leaves ./x.ts in declarations (microsoft/TypeScript#61037); the shipped ones must name files the package has.
    for (const file of files.filter((name) => name.endsWith('.d.ts'))) {
      const text = readFileSync(join(installed, dir, file), 'utf8');
      assert.doesNotMatch(text, /['"]\.{1,2}\/[^'"]*\.ts['"]/, `${dir}/${file} imports a .ts file that the package does not ship`);
    }
  }
  assert.deepEqual(JSON.parse(readFileSync(join(installed, 'dist/cjs/package.json'), 'utf8')), { type: 'commonjs' });
});

test('git ignores the tarball npm pack leaves in client/', async () => {
  const result = await run('git', ['check-ignore', '--no-index', 'client/account-api-client-0.1.0.tgz'], REPO_ROOT);
  assert.equal(result.code, 0, `client/account-api-client-0.1.0.tgz is not ignored: ${result.stdout}${result.stderr}`);
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
  assert.deepEqual(commonjs, { client: 'function' });
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

test('a CommonJS TypeScript project (module node16) compiles against the package, and its output runs with require on Node 20 and 24', async (t) => {
  // Node 20's common base configuration (@tsconfig/node20): module and moduleResolution node16, in a CommonJS package.
  const flags = ['--strict', '--module', 'node16', '--moduleResolution', 'node16', '--target', 'es2022', '--outDir', 'out', ...TYPES_FLAGS];
  await runOk(process.execPath, [TSC, ...flags, 'program.ts'], commonjsProject);
  const compiled = readFileSync(join(commonjsProject, 'out', 'program.js'), 'utf8');
  assert.match(compiled, /require\("@account-api\/client"\)/, 'tsc should have compiled the import to require()');
  const node20 = await findNode20();
  const nodes: Array<[string, RegExp]> = [[process.execPath, /^v24\./]];
  if (node20 !== undefined) nodes.push([node20, /^v20\./]);
  else {
    assert.notEqual(process.env.CI, 'true', 'CI must provide a Node 20 on PATH for this test');
    t.diagnostic('no Node 20 on PATH: ran on Node 24 only');
  }
  for (const [node, version] of nodes) {
    const output = JSON.parse(await runOk(node, [join('out', 'program.js'), server.url, alice.username, alice.key], commonjsProject));
    assert.match(output.node, version);
    assert.equal(output.moduleSystem, 'commonjs');
    assert.deepEqual(output.user, { user_id: output.user.user_id, username: 'alice', name: 'Alice', timezone: 'UTC' });
    assert.deepEqual(output.failure, { isAccountApiError: true, code: 'invalid_timezone' });
  }
});
