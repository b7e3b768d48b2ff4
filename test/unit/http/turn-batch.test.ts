// Protects answering at the end of the turn: TurnBatch runs what was put off in the turn's check phase, in order, and
// loses none of it when one throws; the pipeline puts calls without credentials off to it, so that a turn's answers leave
// together after its reads.
import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { connect, type AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { buildApp } from '../../../src/app.ts';
import { loadConfig } from '../../../src/config.ts';
import { loadTimezoneCatalog } from '../../../src/domain/timezones.ts';
import { createMetrics } from '../../../src/http/observability/metrics.ts';
import { TurnBatch } from '../../../src/http/turn-batch.ts';
import { openStore } from '../../../src/store/open-store.ts';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('TurnBatch', () => {
  test('runs what was put off in the check phase of the same turn, in order, after the immediates already queued', async () => {
    const batch = new TurnBatch({ keepAsyncContext: false });
    const seen: string[] = [];
    setImmediate(() => seen.push('queued before'));
    batch.later(() => seen.push('first'));
    batch.later(() => seen.push('second'));
    seen.push('same turn');
    await nextTurn();
    assert.deepEqual(seen, ['same turn', 'queued before', 'first', 'second']);
  });

  test('what is put off while a batch runs waits for the next turn', async () => {
    const batch = new TurnBatch({ keepAsyncContext: false });
    const seen: string[] = [];
    batch.later(() => {
      seen.push('outer');
      batch.later(() => seen.push('inner'));
      setImmediate(() => seen.push('immediate queued by outer'));
    });
    await nextTurn();
    assert.deepEqual(seen, ['outer']);
    await nextTurn();
    await nextTurn();
    assert.deepEqual(seen, ['outer', 'inner', 'immediate queued by outer']);
  });

  test('a task that throws does not strand the others; its error is thrown again after them', async () => {
    const batch = new TurnBatch({ keepAsyncContext: false });
    const seen: string[] = [];
    const thrown: unknown[] = [];
    process.setUncaughtExceptionCaptureCallback((error) => thrown.push(error));
    try {
      batch.later(() => seen.push('before'));
      batch.later(() => {
        throw new Error('first failure');
      });
      batch.later(() => {
        throw new Error('second failure');
      });
      batch.later(() => seen.push('after'));
      await nextTurn();
      await nextTurn();
    } finally {
      process.setUncaughtExceptionCaptureCallback(null);
    }
    assert.deepEqual(seen, ['before', 'after']);
    assert.deepEqual(thrown.map((error) => (error as Error).message), ['first failure']);
  });
});

describe('TurnBatch keeping async context', () => {
  test('each task runs in the async context it was put off in, not the first task\'s', async () => {
    const store = new AsyncLocalStorage<string>();
    const seen: Array<string | undefined> = [];
    for (const keep of [true, false]) {
      const batch = new TurnBatch({ keepAsyncContext: keep });
      store.run('first', () => batch.later(() => seen.push(store.getStore())));
      store.run('second', () => batch.later(() => seen.push(store.getStore())));
      await nextTurn();
    }
    // Kept: each its own. Not kept: both in the context of the first, whose setImmediate runs them.
    assert.deepEqual(seen, ['first', 'second', 'first', 'first']);
  });
});

describe('the pipeline and calls without credentials', () => {
  test('two pipelined GET /hello are both read before either goes past onRequest, and both are answered', async () => {
    const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent', MAX_EVENT_LOOP_DELAY_MS: '0' });
    const store = openStore(config);
    await store.migrate();
    const app = buildApp({ config, store, timezones: loadTimezoneCatalog(), redis: null, metrics: createMetrics() });
    const marks: string[] = [];
    // preParsing runs once every onRequest hook has let the request go on.
    app.addHook('preParsing', (request, _reply, payload, done) => {
      marks.push(`past onRequest ${request.headers['x-request-id']}`);
      done(null, payload);
    });
    try {
      await app.listen({ host: '127.0.0.1', port: 0 });
      app.server.prependListener('request', (request) => marks.push(`read ${request.headers['x-request-id']}`));
      const { port } = app.server.address() as AddressInfo;
      const socket = connect(port, '127.0.0.1');
      let received = '';
      socket.on('data', (chunk) => (received += chunk.toString('latin1')));
      const answered = new Promise<void>((resolve, reject) => {
        socket.on('data', () => {
          if ((received.match(/"name":"World"/g) ?? []).length === 2) resolve();
        });
        socket.on('error', reject);
      });
      const request = (id: string) => `GET /api/v0/hello HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: ${id}\r\n\r\n`;
      // One write: Node parses both requests in one read, in one turn of the event loop.
      socket.write(request('one') + request('two'));
      await answered;
      socket.destroy();
      assert.deepEqual(marks, ['read one', 'read two', 'past onRequest one', 'past onRequest two']);
      assert.equal((received.match(/HTTP\/1\.1 200 OK/g) ?? []).length, 2);
    } finally {
      await app.close();
      await store.close();
    }
  });
});
