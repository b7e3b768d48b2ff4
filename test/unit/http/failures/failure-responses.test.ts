// How a failure is logged: a bug at error level with its stack; an expected 503 (overload, shutdown, an engine down) as a warning.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import Fastify from 'fastify';
import { DomainError } from '../../../../src/domain/errors.ts';
import { failureResponses } from '../../../../src/http/failures/failure-responses.ts';
import { HttpError } from '../../../../src/http/failures/http-error.ts';

async function logLinesFor(error: unknown): Promise<{ status: number; lines: Record<string, unknown>[] }> {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const app = Fastify({ logger: { level: 'info', stream } });
  app.register(failureResponses, { apiPrefix: '/api/v0' });
  app.get('/fail', async () => {
    throw error;
  });
  const answer = await app.inject('/fail');
  await app.close();
  return { status: answer.statusCode, lines: lines.filter((line) => line.msg === 'request failed' || line.msg === 'request refused') };
}

for (const [label, error] of [
  ['overloaded', new HttpError(503, 'overloaded', 'overloaded', { headers: { 'Retry-After': '2' } })],
  ['shutting_down', new HttpError(503, 'shutting_down', 'closing', { headers: { 'Retry-After': '1' } })],
  ['store_unavailable', new DomainError('unavailable', 'store_unavailable', 'down', { cause: new Error('connect ECONNREFUSED 127.0.0.1:5432') })],
] as const) {
  test(`503 ${label} is logged once as a warning with its code and no stack`, async () => {
    const { status, lines } = await logLinesFor(error);
    assert.equal(status, 503);
    assert.equal(lines.length, 1, `expected one line, got ${JSON.stringify(lines)}`);
    const [line] = lines;
    assert.equal(line!.level, 40, `logged at level ${line!.level}, not warn (40)`);
    assert.equal(line!.code, label);
    assert.ok(!JSON.stringify(line).includes('"stack"'), `a stack was logged for an expected answer: ${JSON.stringify(line)}`);
  });
}

test("the engine's own words are kept on a store_unavailable warning", async () => {
  const { lines } = await logLinesFor(new DomainError('unavailable', 'store_unavailable', 'down', { cause: new Error('connect ECONNREFUSED 127.0.0.1:5432') }));
  assert.equal(lines[0]!.cause, 'connect ECONNREFUSED 127.0.0.1:5432');
});

test('a bug is logged at error level with its stack', async () => {
  const { status, lines } = await logLinesFor(new TypeError('cannot read properties of undefined'));
  assert.equal(status, 500);
  assert.equal(lines[0]!.level, 50);
  assert.match(JSON.stringify(lines[0]), /"stack"/);
});
