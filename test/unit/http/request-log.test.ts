// Protects what an error log line may hold (name, message, stack, code and causes, never the request it came with), and that
// lines written asynchronously are all written, whole and in order, when flushed.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { chunkLimitFor, loggedError, loggingOptions } from '../../../src/http/request-log.ts';

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
});
