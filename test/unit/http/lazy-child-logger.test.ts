// The per-request logger stand-in: writes exactly what a pino child would, with its bindings, and only when enabled.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import pino from 'pino';

import type { FastifyBaseLogger } from 'fastify';
import { LazyChildLogger, logsAt, withBindings } from '../../../src/http/lazy-child-logger.ts';

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

test('a line of safe fields skips redaction through the twin, and reads as the redacting logger would write it', async () => {
  const written: Record<string, Record<string, unknown>[]> = { redacting: [], twin: [] };
  const sink = (into: Record<string, unknown>[]) =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        into.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
  const redact = { paths: ['*.authorization', 'headers.authorization'], censor: '[redacted]' };
  const redacting = pino({ level: 'info', redact, base: { pid: 1 } }, sink(written.redacting!));
  const twin = pino({ level: 'info', base: { pid: 1 } }, sink(written.twin!));
  const log = new LazyChildLogger(redacting as unknown as FastifyBaseLogger, { reqId: 'r-9' }, {}, twin as unknown as FastifyBaseLogger);
  const fields = { method: 'GET', route: '/api/v0/user', path: '/api/v0/user', statusCode: 200, responseTime: 0.4 };
  log.safeLine('info', fields, 'request completed');
  (log as unknown as FastifyBaseLogger).info(fields, 'request completed');
  await settle();
  assert.equal(written.twin!.length, 1, 'the safe line did not go through the twin');
  assert.equal(written.redacting!.length, 1, 'the ordinary line did not go through the redacting parent');
  const withoutTime = ({ time: _time, ...line }: Record<string, unknown>) => line;
  assert.deepEqual(withoutTime(written.twin![0]!), withoutTime(written.redacting![0]!));
  assert.deepEqual(Object.keys(written.twin![0]!), Object.keys(written.redacting![0]!), 'the fields are in another order');
  // Any other line still goes through redaction.
  (log as unknown as FastifyBaseLogger).info({ headers: { authorization: 'Basic c2VjcmV0' } }, 'headers');
  await settle();
  assert.deepEqual(written.redacting![1]!.headers, { authorization: '[redacted]' });
});
