// The per-request logger stand-in: writes exactly what a pino child would, with its bindings, and only when enabled.
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import pino from 'pino';

import type { FastifyBaseLogger } from 'fastify';
import fc from 'fast-check';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LazyChildLogger, logsAt, withBindings } from '../../../../src/http/observability/lazy-child-logger.ts';
import { hundredthsText, loggingOptions, logResponse, quotedAsIs } from '../../../../src/http/observability/request-log.ts';

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

interface Answered {
  readonly bindings: Record<string, string>;
  readonly method: string;
  readonly route: string | undefined;
  readonly url: string;
  readonly statusCode: number;
  readonly elapsedTime: number;
  readonly code: string | undefined;
}

/**
 * Each answer logged twice through the real logging set-up: by logResponse, through a request's lazy logger (the line written
 * by hand), and by pino itself (a real child of that logger's real child, given the same fields); the two lines of each.
 */
function answerLinesTwice(answers: readonly Answered[]): [string, string][] {
  const dir = mkdtempSync(join(tmpdir(), 'account-api-line-'));
  const path = join(dir, 'out.log');
  const fd = openSync(path, 'w');
  try {
    const { fastify: { loggerInstance }, flush, lazyRequestLoggers } = loggingOptions('info', fd);
    const parent = loggerInstance as unknown as FastifyBaseLogger;
    lazyRequestLoggers(parent);
    for (const answer of answers) {
      // As Fastify's default factory makes a request's logger: the root's child().
      const lazy = parent.child(answer.bindings);
      assert.ok(lazy instanceof LazyChildLogger);
      const request = { method: answer.method, url: answer.url, log: lazy } as unknown as FastifyRequest;
      const reply = { statusCode: answer.statusCode, elapsedTime: answer.elapsedTime, failure: answer.code === undefined ? null : { code: answer.code } };
      logResponse(request, reply as unknown as FastifyReply, answer.route);
      // pino's own line: the same fields, through a real child (no bindings of its own) of the lazy logger's real child.
      logResponse({ ...request, log: lazy.child({}) } as FastifyRequest, reply as unknown as FastifyReply, answer.route);
    }
    flush();
    const lines = readFileSync(path, 'utf8').split('\n');
    assert.equal(lines.pop(), '', 'the last line is not whole');
    assert.equal(lines.length, 2 * answers.length);
    return answers.map((_, index) => [lines[2 * index]!, lines[2 * index + 1]!]);
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
}

const withoutTime = (line: string) => line.replace(/"time":\d+/, '"time":0');

test("the answer line, written by hand without redaction, is byte for byte the line pino writes (but for the time)", () => {
  const [[byHand, byPino]] = answerLinesTwice([
    {
      bindings: { reqId: '0f8fad5b-d9cb-469f-a165-70867728950e', trace_id: 'abc' },
      method: 'GET',
      route: '/api/v0/user',
      url: '/api/v0/us"er\\x?key=secret',
      statusCode: 401,
      elapsedTime: 0.4123,
      code: 'key_expired',
    },
  ]) as [[string, string]];
  assert.equal(withoutTime(byHand), withoutTime(byPino));
  const line = JSON.parse(byHand) as Record<string, unknown>;
  assert.deepEqual(
    { ...line, time: 0, pid: 0, hostname: '' },
    { level: 30, time: 0, pid: 0, hostname: '', reqId: '0f8fad5b-d9cb-469f-a165-70867728950e', trace_id: 'abc', method: 'GET', route: '/api/v0/user', path: '/api/v0/us"er\\x', statusCode: 401, responseTime: 0.41, code: 'key_expired', msg: 'request completed' },
  );
});

test('any answer line, whatever its text (quotes, control characters, beyond ASCII, lone surrogates), is the line pino writes', () => {
  const text = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary' }), fc.constantFrom('', '"', '\\', '\u2028', '\ud800', '\u007f', 'é'));
  const answer: fc.Arbitrary<Answered> = fc.record({
    bindings: fc.record({ reqId: text }, { requiredKeys: [] }).chain((bindings) => fc.record({ trace_id: text }, { requiredKeys: [] }).map((more) => ({ ...bindings, ...more }))),
    method: fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH'),
    route: fc.option(fc.oneof(fc.constantFrom('/api/v0/user', '/api/v0/hello'), text), { nil: undefined }),
    url: fc.oneof(text.map((rest) => `/${rest}`), fc.constantFrom('/api/v0/user', '/api/v0/settings/timezones?x=1')),
    statusCode: fc.integer({ min: 100, max: 599 }),
    elapsedTime: fc.oneof(fc.double({ min: 0, max: 1e7, noNaN: true }), fc.integer({ min: 0, max: 10_000_000 }).map((n) => n / 1000)),
    code: fc.option(fc.oneof(fc.constantFrom('key_expired', 'rate_limited'), text), { nil: undefined }),
  });
  fc.assert(
    fc.property(fc.array(answer, { minLength: 1, maxLength: 20 }), (answers) => {
      for (const [byHand, byPino] of answerLinesTwice(answers)) assert.equal(withoutTime(byHand), withoutTime(byPino));
    }),
    { numRuns: 200 },
  );
});

test('bindings the hand-written line would not write as pino does (names pino skips or serialises, values that are not strings, names beyond ASCII) go through pino', () => {
  const unusual: Record<string, unknown>[] = [
    { réqId: 'r-1' },
    { 'a"b': 'r-2' },
    { reqId: 'r-3', level: 'debug' },
    { reqId: 'r-4', err: 'not an error' },
    { reqId: 'r-5', attempt: 2 },
    { reqId: 'r-6', nested: { authorization: 'Bearer aapi_live_secret' } },
  ];
  const answers = unusual.map((bindings) => ({ bindings, method: 'GET', route: '/api/v0/user', url: '/api/v0/user', statusCode: 200, elapsedTime: 1, code: undefined }));
  for (const [byHand, byPino] of answerLinesTwice(answers as unknown as Answered[])) {
    assert.equal(withoutTime(byHand), withoutTime(byPino));
    assert.ok(!byHand.includes('aapi_live_secret'), `a nested credential was written: ${byHand}`);
    assert.equal(Buffer.from(byHand, 'utf8').toString('utf8'), byHand);
  }
});

test('quotedAsIs quotes only text JSON.stringify leaves as it is, and hundredthsText writes numbers as JSON.stringify does', () => {
  fc.assert(
    fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' })), (text) => {
      const quoted = quotedAsIs(text);
      if (quoted !== null) assert.equal(quoted, JSON.stringify(text));
      // Every character from space to tilde but the quote and the backslash is quoted as it stands.
      if (/^[\x20\x21\x23-\x5b\x5d-\x7e]*$/.test(text)) assert.notEqual(quoted, null);
    }),
    { numRuns: 2000 },
  );
  const numbers = fc.oneof(
    fc.double({ noNaN: false }),
    fc.integer({ min: -1000, max: 1e13 }).map((n) => n / 100),
    fc.integer({ min: 0, max: 1e7 }).map((n) => Math.round((n / 997) * 100) / 100),
    fc.constantFrom(0, -0, 0.01, 0.1, 0.07, 1.1, 9.99, 1e10, 1e10 - 0.01, 1e10 + 0.01, 4503599627370496.5, Number.MAX_VALUE, Infinity),
  );
  fc.assert(
    fc.property(numbers, (value) => {
      assert.equal(hundredthsText(value), JSON.stringify(value));
    }),
    { numRuns: 20_000 },
  );
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
  const { buildApp } = await import('../../../../src/app.ts');
  const { buildAdminApp } = await import('../../../../src/service/admin-port.ts');
  const { loadConfig } = await import('../../../../src/config.ts');
  const { loadTimezoneCatalog } = await import('../../../../src/domain/timezones.ts');
  const { createMetrics } = await import('../../../../src/http/observability/metrics.ts');
  const { openStore } = await import('../../../../src/store/open-store.ts');
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
