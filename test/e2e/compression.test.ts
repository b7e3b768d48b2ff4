// The OpenAPI document and the docs page's assets: gzip or brotli when asked, with Vary and a validator that revalidates; and the
// docs page's own look (src/page-style/), read at start without a thread pool.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { HANG_MS } from '../support/eventually.ts';
import { rawGet } from '../support/http.ts';
import { createWorkspace, REPO_ROOT, startServer, type ServerProcess, type Workspace } from '../support/server-process.ts';

let workspace: Workspace;
let server: ServerProcess;
/** The names of the server's threads once it is ready, before any request. */
let threadsAtStart: string[];

before(async () => {
  workspace = createWorkspace();
  server = await startServer(workspace);
  const tasks = `/proc/${server.child.pid}/task`;
  threadsAtStart = readdirSync(tasks).map((task) => readFileSync(join(tasks, task, 'comm'), 'utf8').trim());
});

after(async () => {
  await server.stop();
  workspace.cleanup();
});

const undo = { gzip: gunzipSync, br: brotliDecompressSync } as const;

test('the OpenAPI document is sent gzip or brotli when asked, with Vary, an ETag per coding, and 304 on revalidation', async () => {
  const url = `${server.api}/openapi.json`;
  const plain = await rawGet(url);
  assert.equal(plain.status, 200);
  assert.equal(plain.headers['content-encoding'], undefined);
  assert.equal(plain.headers.vary, 'Accept-Encoding');
  assert.equal(plain.headers['cache-control'], 'no-cache', 'the document may be kept, and revalidated');
  assert.match(plain.headers.etag ?? '', /^"[^"]+"$/);
  JSON.parse(plain.body.toString('utf8'));
  for (const coding of ['gzip', 'br'] as const) {
    const answer = await rawGet(url, { 'accept-encoding': coding });
    assert.equal(answer.headers['content-encoding'], coding);
    assert.ok(answer.body.length < plain.body.length / 3, `${coding}: ${answer.body.length} of ${plain.body.length} bytes`);
    assert.deepEqual(undo[coding](answer.body), plain.body);
    assert.notEqual(answer.headers.etag, plain.headers.etag, 'two codings share a strong ETag');
    const again = await rawGet(url, { 'accept-encoding': coding, 'if-none-match': answer.headers.etag! });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
  }
});

test("the docs page's assets are compressed once in the background, then sent compressed, and revalidate with a 304", async () => {
  const url = `${server.url}/docs/static/swagger-ui-bundle.js`;
  const plain = await rawGet(url);
  assert.equal(plain.status, 200);
  assert.equal(plain.headers.vary, 'Accept-Encoding');
  assert.ok(plain.headers.etag, 'a docs asset has no validator');
  for (const coding of ['br', 'gzip'] as const) {
    let answer = await rawGet(url, { 'accept-encoding': coding });
    // Until the background compression is done the file goes as it is; it never waits for it. How long that takes depends
    // on the machine: the bound is a hang detector, not a timing check.
    const waitingSince = Date.now();
    while (answer.headers['content-encoding'] === undefined && Date.now() - waitingSince < HANG_MS) {
      assert.equal(answer.body.length, plain.body.length, 'a partial body was sent while compressing');
      await sleep(100);
      answer = await rawGet(url, { 'accept-encoding': coding });
    }
    assert.equal(answer.headers['content-encoding'], coding, `${coding}: still not compressed after ${HANG_MS} ms: taken for a hang`);
    assert.equal(Number(answer.headers['content-length']), answer.body.length);
    assert.deepEqual(undo[coding](answer.body), plain.body);
    assert.notEqual(answer.headers.etag, plain.headers.etag);
    const again = await rawGet(url, { 'accept-encoding': coding, 'if-none-match': answer.headers.etag! });
    assert.equal(again.status, 304, `${coding}: the compressed copy's ETag did not revalidate`);
  }
});

test('small answers stay uncompressed', async () => {
  const hello = await rawGet(`${server.api}/hello`, { 'accept-encoding': 'gzip, br' });
  assert.equal(hello.headers['content-encoding'], undefined);
  const icon = await rawGet(`${server.url}/docs/static/favicon-16x16.png`, { 'accept-encoding': 'gzip, br' });
  assert.equal(icon.status, 200);
  assert.equal(icon.headers['content-encoding'], undefined, 'a 665-byte icon was compressed');
});

test("the docs page carries our wordmark, not Swagger UI's logo, and what it needs is read at start without libuv's thread pool", async () => {
  const logo = readFileSync(join(REPO_ROOT, 'node_modules/@fastify/swagger-ui/static/logo.svg')).toString('base64');
  const initializer = await rawGet(`${server.url}/docs/static/swagger-initializer.js`, {});
  assert.equal(initializer.status, 200);
  const script = initializer.body.toString('utf8');
  assert.ok(!script.includes(logo), "the initializer carries Swagger UI's logo");
  assert.ok(!script.includes('img.src ='), "the initializer swaps a logo in after the first render (@fastify/swagger-ui's logo option)");
  const wordmark = await rawGet(`${server.url}/docs/static/theme/wordmark.svg`, {});
  assert.equal(wordmark.status, 200);
  assert.equal(wordmark.body.toString('utf8'), readFileSync(join(REPO_ROOT, 'src/page-style/wordmark.svg'), 'utf8'));
  // Four threads that would wait for work no request of the API gives them (the docs page's files start them when asked for).
  assert.ok(threadsAtStart.includes('MainThread'), `the threads' names are readable: ${threadsAtStart.join(', ')}`);
  assert.deepEqual(threadsAtStart.filter((name) => name.startsWith('libuv-worker')), [], threadsAtStart.join(', '));
});
