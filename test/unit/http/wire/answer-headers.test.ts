// Protects the first headers of every answer (src/http/wire/answer-headers.ts): the request id, then the fixed headers, in
// that order, on every reply of its own, set in one step with this Fastify and the public way when a header came first.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';

import { answerHeaderSetter, setBudgetHeaders, SETS_HEADERS_IN_ONE_STEP } from '../../../../src/http/wire/answer-headers.ts';

const FIXED = { 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY', 'cache-control': 'no-store' };

/** Each answer's raw header names and values, in the order they were sent (Date, Connection and the like left out). */
async function rawHeaders(app: FastifyInstance, path: string): Promise<[string, string][]> {
  const { port } = app.server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = httpRequest({ port, path, agent: false }, (res) => {
      res.resume();
      const pairs: [string, string][] = [];
      for (let i = 0; i < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i]!, res.rawHeaders[i + 1]!]);
      res.on('end', () => resolve(pairs.filter(([name]) => !/^(date|connection|keep-alive|content-length|content-type)$/i.test(name))));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('answerHeaderSetter', () => {
  let app: FastifyInstance;
  let ids = 0;
  /** reply.header() calls the setter made, per path: none when it set the headers in one step. */
  const publicCalls = new Map<string, number>();

  before(async () => {
    const set = answerHeaderSetter(FIXED);
    app = Fastify({ genReqId: () => `id-${++ids}` });
    app.addHook('onRequest', (request, reply, done) => {
      if (request.url === '/budget-alone') return done();
      if (request.url === '/early') reply.header('x-early', 'first');
      const header = reply.header;
      let calls = 0;
      reply.header = function (this: typeof reply, ...args: Parameters<typeof header>) {
        calls++;
        return header.apply(this, args);
      };
      set(reply, request.id);
      // The budget's headers, once or (as when an attempt is charged, then the key) twice: the second values win, in place.
      if (request.url === '/budget') setBudgetHeaders(reply, 600, 599, 60);
      if (request.url === '/budget-twice') {
        setBudgetHeaders(reply, 600, 1, 1);
        reply.header('x-between', 'yes');
        setBudgetHeaders(reply, 50, 49, 42);
      }
      publicCalls.set(request.url, calls);
      reply.header = header;
      done();
    });
    app.get('/plain', async () => 'ok');
    // A route that adds a header of its own and changes a fixed one: neither may reach the next answer.
    app.get('/changes', async (_request, reply) => {
      reply.header('x-route', 'mine').header('cache-control', 'private');
      return 'ok';
    });
    app.get('/early', async () => 'ok');
    app.get('/budget', async () => 'ok');
    app.get('/budget-twice', async () => 'ok');
    // No first headers at all (a route outside the pipeline): the budget's go onto Fastify's own empty object.
    app.get('/budget-alone', async (_request, reply) => {
      setBudgetHeaders(reply, 7, 6, 5);
      return 'ok';
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(() => app.close());

  test('this Fastify keeps the headers where the one-step way finds them, and it is taken', async () => {
    // Were it to fall back, answers would stay right but cost ~5,500 instructions more: a Fastify upgrade must say so.
    assert.equal(SETS_HEADERS_IN_ONE_STEP, true);
    await rawHeaders(app, '/plain');
    assert.equal(publicCalls.get('/plain'), 0, 'the headers were set one by one');
    await rawHeaders(app, '/early');
    assert.ok(publicCalls.get('/early')! > 0, 'a reply that already held a header was not left to the public way');
  });

  test('sends the request id first, then the fixed headers in their order', async () => {
    const headers = await rawHeaders(app, '/plain');
    assert.deepEqual(headers, [['x-request-id', `id-${ids}`], ...Object.entries(FIXED)]);
  });

  test("gives every reply its own headers: one answer's changes never reach the next", async () => {
    const changed = await rawHeaders(app, '/changes');
    assert.deepEqual(changed, [
      ['x-request-id', `id-${ids}`],
      ['x-content-type-options', 'nosniff'],
      ['x-frame-options', 'DENY'],
      ['cache-control', 'private'],
      ['x-route', 'mine'],
    ]);
    const next = await rawHeaders(app, '/plain');
    assert.deepEqual(next, [['x-request-id', `id-${ids}`], ...Object.entries(FIXED)]);
  });

  test('keeps a header set before it, and still sets every one of its own', async () => {
    const headers = await rawHeaders(app, '/early');
    assert.deepEqual(headers, [['x-early', 'first'], ['x-request-id', `id-${ids}`], ...Object.entries(FIXED)]);
  });

  test('keeps the names in lower case, so a route setting one again replaces it rather than sending two', async () => {
    const set = answerHeaderSetter({ 'Cache-Control': 'no-store', 'X-Frame-Options': 'DENY' });
    const mixed = Fastify();
    mixed.addHook('onRequest', (request, reply, done) => {
      set(reply, request.id);
      done();
    });
    mixed.get('/', async (_request, reply) => reply.header('cache-control', 'private').send('ok'));
    await mixed.listen({ port: 0, host: '127.0.0.1' });
    try {
      const headers = await rawHeaders(mixed, '/');
      assert.deepEqual(headers.slice(1), [['cache-control', 'private'], ['x-frame-options', 'DENY']]);
    } finally {
      await mixed.close();
    }
  });

  test('adds the rate budget headers after the first ones, by reply.header() semantics and without calling it', async () => {
    const first = [['x-request-id', `id-${ids + 1}`], ...Object.entries(FIXED)];
    assert.deepEqual(await rawHeaders(app, '/budget'), [...first, ['ratelimit-limit', '600'], ['ratelimit-remaining', '599'], ['ratelimit-reset', '60']]);
    assert.equal(publicCalls.get('/budget'), 0);
    const second = [['x-request-id', `id-${ids + 1}`], ...Object.entries(FIXED)];
    assert.deepEqual(await rawHeaders(app, '/budget-twice'), [
      ...second,
      ['ratelimit-limit', '50'],
      ['ratelimit-remaining', '49'],
      ['ratelimit-reset', '42'],
      ['x-between', 'yes'],
    ]);
    assert.deepEqual((await rawHeaders(app, '/budget-alone')).filter(([name]) => name.startsWith('ratelimit')), [
      ['ratelimit-limit', '7'],
      ['ratelimit-remaining', '6'],
      ['ratelimit-reset', '5'],
    ]);
  });

  test('answers concurrent requests each with its own id', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, () => rawHeaders(app, '/plain')));
    const sent = answers.map((headers) => headers[0]![1]);
    assert.equal(new Set(sent).size, 20, `ids repeated: ${sent.join(', ')}`);
  });
});
