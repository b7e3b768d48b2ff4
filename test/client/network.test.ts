// Failures without a proper answer: a server that never answers (timeout), nothing listening (network_error), and an answer
// that is not the API's envelope (invalid_response). GETs are retried after a missing answer, POSTs are not.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { AccountApiClient } from '../../client/src/index.ts';
import { expectApiError, recordingFetch, recordingSleep } from './recording.ts';

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

let silent: Server;
let silentUrl: string;
let stalling: Server;
let stallingUrl: string;
let htmlProxy: Server;
let htmlProxyUrl: string;
let closedUrl: string;

before(async () => {
  // Accepts each request and never answers it.
  silent = createServer(() => {});
  silentUrl = await listen(silent);
  // Sends the status line, headers and half a body, then stalls.
  stalling = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.write('{"status":"success",');
  });
  stallingUrl = await listen(stalling);
  // Stands for a proxy in front of the API that answers with its own page.
  htmlProxy = createServer((_request, response) => response.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad Gateway</h1>'));
  htmlProxyUrl = await listen(htmlProxy);
  // A port that was free a moment ago and that nothing listens on now.
  const closed = createServer();
  closedUrl = await listen(closed);
  await close(closed);
});

after(async () => {
  await Promise.all([close(silent), close(stalling), close(htmlProxy)]);
});

describe('timeout', () => {
  // Attempts are counted by the client's fetch: under load an aborted attempt may never reach the server's request handler.
  test('a GET with no answer within timeoutMs throws code timeout, status 0, after its retries', async () => {
    const { fetch, exchanges } = recordingFetch();
    const { sleep, delays } = recordingSleep();
    const client = new AccountApiClient({ baseUrl: silentUrl, timeoutMs: 500, retries: 1, fetch, sleep });
    // The silent server never answers: without the timeout this would never return. What is asserted is that it fired, on
    // each attempt, not how long it took.
    const error = await expectApiError(() => client.hello(), { status: 0, code: 'timeout', field: undefined, requestId: undefined });
    assert.match(error.message, /within 500 ms/);
    assert.deepEqual(exchanges.map((exchange) => `${exchange.method} ${exchange.status}`), ['GET no answer', 'GET no answer'], 'the GET was tried twice');
    assert.equal(delays.length, 1);
  });

  test('a POST that timed out is not repeated: the server may have acted on it', async () => {
    const { fetch, exchanges } = recordingFetch();
    const client = new AccountApiClient({ baseUrl: silentUrl, timeoutMs: 500, retries: 2, fetch, sleep: async () => {} });
    await expectApiError(() => client.sayHello('once'), { status: 0, code: 'timeout' });
    assert.deepEqual(exchanges.map((exchange) => `${exchange.method} ${exchange.status}`), ['POST no answer']);
  });

  test('the timeout covers the body: headers followed by a stalled body also end in timeout', async () => {
    const client = new AccountApiClient({ baseUrl: stallingUrl, timeoutMs: 500, retries: 0 });
    await expectApiError(() => client.hello(), { status: 0, code: 'timeout' });
  });
});

describe('network_error', () => {
  test('nothing listening: a GET is retried, then throws network_error with status 0 and the cause', async () => {
    const { fetch, exchanges } = recordingFetch();
    const { sleep, delays } = recordingSleep();
    const error = await expectApiError(() => new AccountApiClient({ baseUrl: closedUrl, fetch, sleep }).hello(), { status: 0, code: 'network_error' });
    assert.match(error.message, /ECONNREFUSED/);
    assert.ok(error.cause instanceof Error, 'the underlying failure is kept as cause');
    assert.deepEqual(exchanges.map((exchange) => exchange.status), ['no answer', 'no answer', 'no answer']);
    assert.equal(delays.length, 2);
    assert.ok(delays[0]! >= 250 && delays[0]! <= 500 && delays[1]! >= 500 && delays[1]! <= 1000, `exponential backoff with jitter: ${delays.join(', ')}`);
  });

  test('nothing listening: a POST is sent once', async () => {
    const { fetch, exchanges } = recordingFetch();
    await expectApiError(() => new AccountApiClient({ baseUrl: closedUrl, fetch, sleep: async () => {} }).sayHello('x'), { code: 'network_error' });
    assert.equal(exchanges.length, 1);
  });
});

test('an answer that is not the envelope (a proxy page) throws invalid_response with its status, not retried', async () => {
  const { fetch, exchanges } = recordingFetch();
  const error = await expectApiError(() => new AccountApiClient({ baseUrl: htmlProxyUrl, fetch }).hello(), { status: 502, code: 'invalid_response' });
  assert.match(error.message, /HTTP 502/);
  assert.equal(exchanges.length, 1);
});
