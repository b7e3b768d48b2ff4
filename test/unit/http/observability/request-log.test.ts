// Protects what an error log line may hold (name, message, stack, code and causes, never the request it came with), and that
// lines written asynchronously are all written, whole and in order, when flushed.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs, { closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, mock, test, type TestContext } from 'node:test';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';

import { chunkLimitFor, loggedError, loggingOptions, logResponse } from '../../../../src/http/observability/request-log.ts';

const SECRET = 'Basic YWxpY2U6YWFwaV9saXZlX3NlY3JldA==';

describe('loggedError', () => {
  test('keeps the name, message, stack and code', () => {
    const error = Object.assign(new TypeError('boom'), { code: 'E_BOOM' });
    const logged = loggedError(error);
    assert.equal(logged.type, 'TypeError');
    assert.equal(logged.message, 'boom');
    assert.equal(logged.code, 'E_BOOM');
    assert.match(logged.stack, /boom/);
  });

  test("drops every other property, such as a parse error's raw request bytes or a request's headers", () => {
    const error = Object.assign(new Error('Parse Error: Invalid header value char'), {
      rawPacket: Buffer.from(`GET / HTTP/1.1\r\nAuthorization: ${SECRET}\r\n\r\n`),
      headers: { authorization: SECRET },
      body: { key: 'aapi_live_x' },
    });
    const text = JSON.stringify(loggedError(error));
    assert.ok(!text.includes('YWxpY2U6'), `the credentials were kept: ${text}`);
    assert.ok(!text.includes('aapi_live_x'), `the body was kept: ${text}`);
  });

  test('follows causes a few levels deep, and stops', () => {
    let error: Error = new Error('level 0');
    for (let level = 1; level <= 10; level++) error = new Error(`level ${level}`, { cause: error });
    let depth = 0;
    for (let logged = loggedError(error); logged.cause !== undefined; logged = logged.cause) depth++;
    assert.equal(depth, 3);
  });

  test('describes a thrown value that is not an Error', () => {
    assert.deepEqual(loggedError('just a string'), { type: 'string', message: 'just a string', stack: '' });
  });
});

/**
 * Calls `watch` with every write of bytes through fs.writeSync (how SonicBoom writes) before it is made; a throw refuses it.
 * Undone when the test ends.
 */
function watchWrites(t: TestContext, watch: (fd: number, bytes: ArrayBufferView) => void): void {
  const writeSync = fs.writeSync;
  mock.method(fs, 'writeSync', function (this: unknown, ...args: Parameters<typeof fs.writeSync>) {
    const data: unknown = args[1];
    if (ArrayBuffer.isView(data)) watch(args[0], data);
    return (writeSync as (...values: unknown[]) => number).apply(this, args);
  });
  t.after(() => mock.restoreAll());
}

/** The logging set-up at info on `fd`, its root logger making lazy request loggers, as the apps have it. */
function requestLogging(fd: number) {
  const { fastify: { loggerInstance }, flush, lazyRequestLoggers } = loggingOptions('info', fd);
  const root = loggerInstance as unknown as FastifyBaseLogger;
  lazyRequestLoggers(root);
  return { root, flush };
}

describe('asynchronous log lines', () => {
  test('are held by the logger until written, and flush writes every one of them at once, whole', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'account-api-log-'));
    const path = join(dir, 'out.log');
    const fd = openSync(path, 'w');
    try {
      const { fastify: { loggerInstance }, flush } = loggingOptions('info', fd);
      const logger = loggerInstance as unknown as { info(fields: object, message: string): void };
      const lines = 3000;
      for (let index = 0; index < lines; index++) logger.info({ index, padding: 'x'.repeat(100) }, 'request completed');
      // Asynchronous: a burst of lines is not all on disk by the time the calls return...
      assert.ok(readFileSync(path, 'utf8').split('\n').filter(Boolean).length < lines, 'every line was written synchronously');
      // ...and a flush (on close, exit, a fatal error) writes what is left, synchronously.
      flush();
      const written = readFileSync(path, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { index: number });
      assert.deepEqual(
        written.map((line) => line.index),
        Array.from({ length: lines }, (_, index) => index),
        'lines were lost, split or reordered',
      );
    } finally {
      closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('leave in chunks of at most PIPE_BUF to a pipe, where only such writes are atomic, and of 64 KiB to a file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'account-api-log-'));
    const fd = openSync(join(dir, 'out.log'), 'w');
    // A named pipe, opened for reading and writing (Linux) so that opening does not wait for a reader.
    execFileSync('mkfifo', [join(dir, 'pipe')]);
    const pipe = openSync(join(dir, 'pipe'), 'r+');
    try {
      assert.equal(chunkLimitFor(fd), 64 * 1024, 'a regular file should take big chunks');
      assert.equal(chunkLimitFor(pipe), 4096, 'a pipe must get writes of at most PIPE_BUF, or workers interleave');
      assert.equal(chunkLimitFor(-1), 4096, 'an fd that cannot be examined must be treated as a pipe');
      assert.equal(loggingOptions('info', fd).chunkBytes, 64 * 1024);
    } finally {
      closeSync(fd);
      closeSync(pipe);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('are counted in bytes, not characters: to a pipe, every write holds whole lines and at most PIPE_BUF of them', (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'account-api-log-'));
    execFileSync('mkfifo', [join(dir, 'pipe')]);
    // Read and write (Linux), so that opening does not wait for a reader; what is written stays in the pipe (64 KiB) to be read.
    const pipe = openSync(join(dir, 'pipe'), 'r+');
    const writes: number[] = [];
    watchWrites(t, (fd, bytes) => {
      if (fd === pipe) writes.push(bytes.byteLength);
    });
    try {
      const { root, flush } = requestLogging(pipe);
      const expected: string[] = [];
      for (let index = 0; index < 150; index++) {
        // Three bytes a character in UTF-8 (a line counted in characters would overfill a chunk), four for the emoji.
        const path = index % 3 === 0 ? `/api/v0/${'€'.repeat(40)}` : index % 3 === 1 ? `/api/v0/${'\u{1F600}'.repeat(10)}` : '/api/v0/user';
        const request = { method: 'GET', url: path, log: root.child({ reqId: `r-${index}` }) } as unknown as FastifyRequest;
        logResponse(request, { statusCode: 200, elapsedTime: 1, failure: null } as unknown as FastifyReply, '/api/v0/user');
        expected.push(`r-${index}`);
        if (index === 75) {
          // One line longer than a chunk: it leaves on its own, after every line before it.
          (root as unknown as { warn(fields: object, message: string): void }).warn({ padding: 'é'.repeat(3000) }, 'long');
          expected.push('long');
        }
      }
      flush();
      const bytes = Buffer.alloc(128 * 1024);
      const read = readSync(pipe, bytes);
      const text = bytes.subarray(0, read).toString('utf8');
      const lines = text.split('\n');
      assert.equal(lines.pop(), '', 'the last line is not whole');
      assert.deepEqual(lines.map((line) => { const parsed = JSON.parse(line) as { reqId?: string; msg: string }; return parsed.reqId ?? parsed.msg; }), expected);
      assert.ok(lines.some((line) => line.includes('€'.repeat(40))) && lines.some((line) => line.includes('\u{1F600}')), 'text beyond ASCII was not written as it is');
      assert.equal(writes.reduce((sum, size) => sum + size, 0), read);
      const oversized = writes.filter((size) => size > 4096);
      assert.equal(oversized.length, 1, `writes over PIPE_BUF: ${oversized.join(', ')}`);
      assert.ok(oversized[0]! > 6000, 'only the long line may leave in a write over PIPE_BUF');
      assert.ok(writes.length >= 5, 'the lines were not gathered in chunks');
      // Every write ends at the end of a line.
      let offset = 0;
      for (const size of writes) {
        offset += size;
        assert.equal(bytes[offset - 1], 0x0a, 'a write ended inside a line');
      }
    } finally {
      closeSync(pipe);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a write that fails (a full disk) throws at no request, and every line still leaves once, whole and in order', (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'account-api-log-'));
    const path = join(dir, 'out.log');
    const fd = openSync(path, 'w');
    let diskFull = false;
    let refused = 0;
    watchWrites(t, (target) => {
      if (target !== fd || !diskFull) return;
      refused++;
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28 });
    });
    try {
      const { root, flush } = requestLogging(fd);
      const lines = 1200;
      for (let index = 0; index < lines; index++) {
        diskFull = index >= 300 && index < 700;
        // Lines of many lengths, so that chunks end at different places; answer lines and pino's own, in turn.
        const url = `/api/v0/${'x'.repeat(50 + ((index * 37) % 200))}`;
        if (index % 2 === 0) {
          const request = { method: 'GET', url, log: root.child({ reqId: `r-${index}` }) } as unknown as FastifyRequest;
          logResponse(request, { statusCode: 200, elapsedTime: 1, failure: null } as unknown as FastifyReply, '/api/v0/user');
        } else {
          (root as unknown as { info(fields: object, message: string): void }).info({ reqId: `r-${index}`, path: url }, 'other');
        }
      }
      diskFull = false;
      flush();
      assert.ok(refused > 0, 'no write was refused: the test tests nothing');
      const written = readFileSync(path, 'utf8').split('\n');
      assert.equal(written.pop(), '', 'the last line is not whole');
      assert.deepEqual(
        written.map((line) => (JSON.parse(line) as { reqId: string }).reqId),
        Array.from({ length: lines }, (_, index) => `r-${index}`),
        'lines were lost, doubled, cut or reordered',
      );
    } finally {
      closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
