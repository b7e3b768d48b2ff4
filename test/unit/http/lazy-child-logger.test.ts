// The per-request logger stand-in: writes exactly what a pino child would, with its bindings, and only when enabled.
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import pino from 'pino';

import type { FastifyBaseLogger } from 'fastify';
import { LazyChildLogger, logSafeLine, logsAt, withBindings } from '../../../src/http/lazy-child-logger.ts';
import { loggingOptions } from '../../../src/http/request-log.ts';

const lazyChild = (parent: FastifyBaseLogger, bindings: Record<string, unknown>) =>
  new LazyChildLogger(parent, bindings, {}) as unknown as FastifyBaseLogger;

function capture(level: string) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const parent = pino({ level }, stream);
  let children = 0;
  const countingParent = Object.assign(Object.create(parent) as typeof parent, {
    child: (...args: Parameters<typeof parent.child>) => {
      children++;
      return parent.child(...args);
    },
  });
  return { lines, parent: countingParent, children: () => children };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

test('at warn, info and debug lines are dropped without making a child; warn is written with the bindings', async () => {
  const { lines, parent, children } = capture('warn');
  const log = lazyChild(parent, { reqId: 'r-1' });
  assert.equal(logsAt(log, 'info'), false);
  assert.equal(logsAt(log, 'warn'), true);
  log.info({ a: 1 }, 'not written');
  log.debug('not written either');
  assert.equal(children(), 0, 'a child was made for lines that are not written');
  log.warn({ b: 2 }, 'written');
  log.error('also written');
  await settle();
  assert.equal(children(), 1, 'one child for every line of the request');
  assert.deepEqual(
    lines.map((line) => [line.level, line.reqId, line.msg, line.b]),
    [
      [40, 'r-1', 'written', 2],
      [50, 'r-1', 'also written', undefined],
    ],
  );
});

test('at info, info lines are written; level reports the parent level', async () => {
  const { lines, parent } = capture('info');
  const log = lazyChild(parent, { reqId: 'r-2' });
  assert.equal(log.level, 'info');
  log.info({ statusCode: 200 }, 'request completed');
  log.debug('dropped');
  await settle();
  assert.deepEqual(lines.map((line) => [line.msg, line.reqId, line.statusCode]), [['request completed', 'r-2', 200]]);
});

test('silent writes nothing at any level', async () => {
  const { lines, parent } = capture('silent');
  const log = lazyChild(parent, { reqId: 'r-3' });
  log.fatal('no');
  await settle();
  assert.equal(lines.length, 0);
  assert.equal(logsAt(log, 'fatal'), false);
});

test("more bindings (a traced request's trace id) are written on its lines, still without making a child", async () => {
  const { lines, parent, children } = capture('info');
  const log = withBindings(lazyChild(parent, { reqId: 'r-3' }), { trace_id: 't-1' });
  log.info({ statusCode: 200 }, 'request completed');
  await settle();
  assert.equal(children(), 0, 'adding bindings made a pino child');
  assert.deepEqual(
    lines.map(({ reqId, trace_id, statusCode, msg }) => ({ reqId, trace_id, statusCode, msg })),
    [{ reqId: 'r-3', trace_id: 't-1', statusCode: 200, msg: 'request completed' }],
  );
});

test("the answer line, written by hand without redaction, is byte for byte the line pino writes (but for the time)", () => {
  const dir = mkdtempSync(join(tmpdir(), 'account-api-line-'));
  const path = join(dir, 'out.log');
  const fd = openSync(path, 'w');
  try {
    const { fastify: { loggerInstance }, flush, lazyRequestLoggers } = loggingOptions('info', fd);
    const parent = loggerInstance as unknown as FastifyBaseLogger;
    lazyRequestLoggers(parent);
    const bindings = { reqId: '0f8fad5b-d9cb-469f-a165-70867728950e', trace_id: 'abc' };
    // As Fastify's default factory makes a request's logger: the root's child().
    const lazy = parent.child(bindings);
    const fields = { method: 'GET', route: '/api/v0/user', path: '/api/v0/us"er\\x', statusCode: 401, responseTime: 0.41, code: 'key_expired', absent: undefined };
    logSafeLine(lazy, 'info', fields, 'request completed');
    // pino's own line: a real child of the lazy one's real child, with no bindings of its own.
    lazy.child({}).info(fields, 'request completed');
    // Any other line still goes through redaction.
    lazy.info({ headers: { authorization: 'Basic c2VjcmV0' } }, 'headers');
    flush();
    const [byHand, byPino, other] = readFileSync(path, 'utf8').split('\n');
    const withoutTime = (line: string | undefined) => (line ?? '').replace(/"time":\d+/, '"time":0');
    assert.equal(withoutTime(byHand), withoutTime(byPino));
    assert.deepEqual((JSON.parse(other!) as { headers: unknown }).headers, { authorization: '[redacted]' });
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the app logger's child() makes lazy loggers, so Fastify's default factory needs no childLoggerFactory (checked on every request)", () => {
  const dir = mkdtempSync(join(tmpdir(), 'account-api-child-'));
  const path = join(dir, 'out.log');
  const fd = openSync(path, 'w');
  try {
    const options = loggingOptions('info', fd);
    assert.equal('childLoggerFactory' in options.fastify, false, 'a childLoggerFactory makes Fastify check every request logger');
    const root = options.fastify.loggerInstance as unknown as FastifyBaseLogger;
    options.lazyRequestLoggers(root);
    const requestLogger = root.child({ reqId: 'r-1' });
    assert.ok(requestLogger instanceof LazyChildLogger, 'the root made a real child, not a lazy one');
    // A real child (made when a request logger makes a child of its own) and its children: pino's child() all the way down,
    // each line with every binding from the root down.
    const real = requestLogger.child({ step: 'a' });
    assert.equal(real instanceof LazyChildLogger, false);
    const grandchild = real.child({ part: 'b' });
    assert.equal(grandchild instanceof LazyChildLogger, false);
    requestLogger.info('one');
    real.info('two');
    grandchild.info('three');
    options.flush();
    const lines = readFileSync(path, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.deepEqual(
      lines.map(({ reqId, step, part, msg }) => ({ reqId, step, part, msg })),
      [
        { reqId: 'r-1', step: undefined, part: undefined, msg: 'one' },
        { reqId: 'r-1', step: 'a', part: undefined, msg: 'two' },
        { reqId: 'r-1', step: 'a', part: 'b', msg: 'three' },
      ],
    );
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('every request of the built app, on the public port and the admin one, gets a lazy logger', async () => {
  const { buildApp } = await import('../../../src/app.ts');
  const { buildAdminApp } = await import('../../../src/admin/admin-app.ts');
  const { loadConfig } = await import('../../../src/config.ts');
  const { loadTimezoneCatalog } = await import('../../../src/domain/timezones.ts');
  const { createMetrics } = await import('../../../src/http/metrics.ts');
  const { openStore } = await import('../../../src/store/open-store.ts');
  const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'info' });
  const store = openStore(config);
  await store.migrate();
  const apps = [
    buildApp({ config, store, timezones: loadTimezoneCatalog(), redis: null, metrics: createMetrics() }),
    buildAdminApp({ config, store, timezones: loadTimezoneCatalog(), redis: null, metrics: createMetrics() }),
  ];
  try {
    for (const app of apps) {
      const loggers: unknown[] = [];
      app.addHook('onRequest', (request, _reply, done) => {
        loggers.push(request.log);
        done();
      });
      await app.ready();
      await app.inject({ url: '/no-such-path' });
      await app.inject({ url: '/api/v0/hello' });
      assert.equal(loggers.length > 0, true, 'no request reached the hook');
      for (const logger of loggers) {
        // Fastify wraps the loggerInstance in a child of its own: the override must sit on that one, app.log.
        assert.ok(logger instanceof LazyChildLogger, `a request got a ${(logger as object).constructor.name}, not a lazy logger`);
      }
    }
  } finally {
    for (const app of apps) await app.close();
    await store.close();
  }
});
