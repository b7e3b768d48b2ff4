// Node's compile cache (src/main.ts): a start leaves its compiled modules on disk, the next start uses them, and a cache that
// cannot be had leaves the server as it would be without one. Node's own debug output (NODE_DEBUG_NATIVE=COMPILE_CACHE) says
// what it read and what it accepted.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import { createWorkspace, REPO_ROOT, startServer, type ServerProcess, type Workspace } from '../support/server-process.ts';

let workspace: Workspace;

before(() => {
  workspace = createWorkspace();
});

after(() => workspace.cleanup());

/** The `account-api ready` log line, which the server writes on stdout (the URL it listens at goes to stderr first). */
async function readyLine(server: ServerProcess): Promise<{ compileCache: string | null }> {
  for (let waited = 0; waited < 10_000; waited += 20) {
    const line = server.output.find((each) => each.includes('"account-api ready"'));
    if (line !== undefined) return JSON.parse(line) as { compileCache: string | null };
    await new Promise((done) => setTimeout(done, 20));
  }
  throw new Error(`no 'account-api ready' line:\n${server.output.join('\n')}`);
}

async function helloStatus(server: ServerProcess): Promise<number> {
  return (await fetch(`${server.api}/hello`)).status;
}

const APP_MODULE = pathToFileURL(join(REPO_ROOT, 'src/app.ts')).href;

test('a start leaves its compiled modules in the cache as soon as it is ready, and the next start uses them', async () => {
  const cache = join(workspace.dir, 'compile-cache');
  const first = await startServer(workspace, [], { NODE_COMPILE_CACHE: cache });
  const { compileCache } = await readyLine(first);
  // Killed, as a crash would: what is on disk was written when the server became ready, not on a clean exit.
  await first.kill();
  assert.ok(compileCache?.startsWith(`${cache}/`), `the ready line names the cache under NODE_COMPILE_CACHE; it says ${compileCache}`);
  const files = readdirSync(compileCache!);
  assert.ok(files.length > 100, `one entry per module and kind (there are over 100 modules); found ${files.length}`);

  const second = await startServer(workspace, [], { NODE_COMPILE_CACHE: cache, NODE_DEBUG_NATIVE: 'COMPILE_CACHE' });
  try {
    assert.equal(await helloStatus(second), 200);
    const debug = second.output.join('\n');
    assert.match(debug, new RegExp(`retrieving transpile cache for StrippedTypeScript ${APP_MODULE}\\.\\.\\.success`), 'src/app.ts was not type-stripped again');
    assert.match(debug, new RegExp(`V8 code cache for ESM ${APP_MODULE} was accepted`), 'nor compiled again');
  } finally {
    await second.stop();
  }
});

test('by default the cache is in node_modules/.cache/account-api of the checkout', async () => {
  const server = await startServer(workspace);
  try {
    const { compileCache } = await readyLine(server);
    assert.ok(compileCache?.startsWith(join(REPO_ROOT, 'node_modules/.cache/account-api/')), `it is ${compileCache}`);
  } finally {
    await server.stop();
  }
});

test('where the cache cannot be written, the server starts and answers without one', async () => {
  const blocked = join(workspace.dir, 'not-a-directory');
  writeFileSync(blocked, '');
  const server = await startServer(workspace, [], { NODE_COMPILE_CACHE: join(blocked, 'cache') });
  try {
    assert.equal((await readyLine(server)).compileCache, null, 'the ready line says there is no cache');
    assert.equal(await helloStatus(server), 200);
  } finally {
    assert.equal(await server.stop(), 0, 'a clean stop');
  }
});

test('NODE_DISABLE_COMPILE_CACHE=1 turns it off', async () => {
  const cache = join(workspace.dir, 'disabled-cache');
  mkdirSync(cache);
  const server = await startServer(workspace, [], { NODE_COMPILE_CACHE: cache, NODE_DISABLE_COMPILE_CACHE: '1' });
  try {
    assert.equal((await readyLine(server)).compileCache, null);
    assert.equal(await helloStatus(server), 200);
  } finally {
    await server.stop();
  }
  assert.ok(existsSync(cache) && readdirSync(cache).length === 0, 'nothing written to NODE_COMPILE_CACHE');
});
