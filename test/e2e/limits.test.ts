// Protects the server's limits: oversized headers, raw garbage, too many or too long parameters, and slow or idle connections.
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, test } from 'node:test';

import { HANG_MS } from '../support/eventually.ts';
import { call, failureMessage } from '../support/http.ts';
import { createWorkspace, startServer, type ServerProcess, type Workspace } from '../support/server-process.ts';

const HEADERS_TIMEOUT_MS = 2000;
const REQUEST_TIMEOUT_MS = 4000;
const SLOW_CONNECTIONS = 1000;

let workspace: Workspace;
let server: ServerProcess;
let port: number;

before(async () => {
  workspace = createWorkspace();
  server = await startServer(workspace, [], {
    HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
    REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
  });
  port = Number(new URL(server.url).port);
});

after(async () => {
  await server?.stop();
  workspace?.cleanup();
});

interface RawAnswer {
  readonly status: number;
  readonly headers: Map<string, string>;
  readonly body: any;
  readonly raw: string;
}

/** Reads what the server sends on `socket` until it closes the connection, as one HTTP/1.1 JSON answer; fails on a reset. */
function readAnswer(socket: Socket, what: string): Promise<RawAnswer> {
  return new Promise((done, fail) => {
    let raw = '';
    socket.setEncoding('latin1').on('data', (chunk: string) => (raw += chunk));
    socket.on('error', (error) => fail(new Error(`${what}: ${error.message} after ${JSON.stringify(raw)}`)));
    socket.on('close', () => {
      const [head = '', body = ''] = raw.split('\r\n\r\n', 2);
      const [statusLine = '', ...lines] = head.split('\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1]);
      const headers = new Map(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      try {
        done({ status, headers, body: JSON.parse(body), raw });
      } catch {
        fail(new Error(`${what}: the answer is not an HTTP/1.1 JSON response: ${JSON.stringify(raw)}`));
      }
    });
  });
}

/** Writes `bytes` on a fresh connection and reads the answer. */
function rawExchange(bytes: string): Promise<RawAnswer> {
  const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
  return readAnswer(socket, JSON.stringify(bytes.slice(0, 60)));
}

function assertRawFailure(answer: RawAnswer, status: number, code: string, what: string): void {
  assert.equal(answer.status, status, `${what}: wrong status in ${JSON.stringify(answer.raw)}`);
  assert.equal(answer.headers.get('connection'), 'close', `${what}: the answer must say Connection: close`);
  assert.equal(Number(answer.headers.get('content-length')), Buffer.byteLength(JSON.stringify(answer.body)), `${what}: Content-Length`);
  assert.match(answer.headers.get('content-type') ?? '', /^application\/json/, `${what}: Content-Type`);
  assert.deepEqual(
    answer.body,
    { status: 'fail', messages: [{ code, message: answer.body.messages?.[0]?.message }], meta: {}, data: null },
    `${what}: not the failure envelope with code ${code}`,
  );
}

test('headers over MAX_HEADER_BYTES answer 431 headers_too_large with the envelope, even when sent all at once', async () => {
  for (const size of [17 * 1024, 200 * 1024]) {
    const answer = await rawExchange(`GET /api/v0/hello HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(size)}\r\n\r\n`);
    assertRawFailure(answer, 431, 'headers_too_large', `${size} bytes of headers`);
  }
});

test('bytes that are not HTTP/1.1 answer 400 malformed_request with the envelope', async () => {
  const garbage: Record<string, string> = {
    'a line that is no request': 'HELLO\r\n\r\n',
    'an invalid header name': 'GET /api/v0/hello HTTP/1.1\r\nHost: x\r\nBad Name: y\r\n\r\n',
    'a chunk size that is not hex': 'POST /api/v0/hello HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n',
    'binary noise': '\x00\x01\x02\xff\xfe GET\r\n\r\n',
    'both Content-Length and chunked': 'POST /api/v0/hello HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
  };
  for (const [what, bytes] of Object.entries(garbage)) {
    assertRawFailure(await rawExchange(bytes), 400, 'malformed_request', what);
  }
  assert.equal((await call('GET', `${server.api}/hello`)).status, 200, 'the server stopped answering after the garbage');
});

test('an HTTP/1.1 request without Host answers 400 malformed_request with the envelope, not a bare 400', async () => {
  const answer = await rawExchange('GET /api/v0/hello HTTP/1.1\r\nConnection: close\r\n\r\n');
  assertRawFailure(answer, 400, 'malformed_request', 'no Host header');
  const old = await rawExchange('GET /api/v0/hello HTTP/1.0\r\n\r\n');
  assert.equal(old.status, 200, `HTTP/1.0 needs no Host: ${old.raw}`);
});

test('a body that trickles in past REQUEST_TIMEOUT_MS answers 408 request_timeout with the envelope', async () => {
  const head = 'POST /api/v0/hello HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\n';
  const started = Date.now();
  const socket = connect(port, '127.0.0.1', () => socket.write(`${head}name=`));
  const trickle = setInterval(() => socket.writable && socket.write('a'), 500);
  const answer = await readAnswer(socket, 'a trickled body').finally(() => clearInterval(trickle));
  assertRawFailure(answer, 408, 'request_timeout', 'a trickled body');
  assert.ok(Date.now() - started >= REQUEST_TIMEOUT_MS, `closed after ${Date.now() - started} ms, before REQUEST_TIMEOUT_MS: it was not this timeout`);
});

test('more than MAX_PARAMETERS body parameters answer 400 too_many_parameters, in a form and in JSON', async () => {
  const many = Object.fromEntries(Array.from({ length: 21 }, (_, index) => [`p${index}`, 'x']));
  for (const [what, options] of [
    ['form', { form: many }],
    ['JSON', { json: many }],
    ['form with one name repeated', { form: `${'name=a&'.repeat(20)}name=a` }],
  ] as const) {
    const result = await call('POST', `${server.api}/hello`, options);
    assert.equal(result.status, 400, `${what}: ${result.text}`);
    assert.equal(failureMessage(result).code, 'too_many_parameters', `${what}: ${result.text}`);
  }
  const twenty = { name: 'x', ...Object.fromEntries(Array.from({ length: 19 }, (_, index) => [`p${index}`, 'x'])) };
  const result = await call('POST', `${server.api}/hello`, { json: twenty });
  assert.equal(failureMessage(result).code, 'unknown_parameter', `20 parameters are within the limit: ${result.text}`);
});

test('a value over MAX_PARAMETER_LENGTH code points answers 400 parameter_too_long naming the field, in a form and in JSON', async () => {
  const longest = '😀'.repeat(1000); // 1,000 code points, 2,000 UTF-16 units, 4,000 bytes
  for (const [what, options] of [
    ['form', (name: string) => ({ form: { name } })],
    ['JSON', (name: string) => ({ json: { name } })],
  ] as const) {
    const accepted = await call('POST', `${server.api}/hello`, options(longest));
    assert.equal(accepted.status, 200, `${what}: 1,000 emoji are 1,000 code points, within the limit: ${accepted.text}`);
    assert.equal(accepted.body.data.name, longest, `${what}: the value was not echoed whole`);
    const refused = await call('POST', `${server.api}/hello`, options(`${longest}a`));
    assert.equal(refused.status, 400, `${what}: ${refused.text}`);
    assert.deepEqual({ ...failureMessage(refused), message: '' }, { code: 'parameter_too_long', field: 'name', message: '' }, what);
  }
});

test(`${SLOW_CONNECTIONS} idle and slow connections do not stop a normal client, and the timeouts close every one`, async () => {
  const sockets: Socket[] = [];
  const closedAt = new Map<Socket, number>();
  let answered408 = 0;
  let resets = 0;
  const openedAt = Date.now();
  // Half send nothing at all; half start a request and then trickle one header byte every 500 ms (slowloris).
  for (let batch = 0; batch < SLOW_CONNECTIONS; batch += 100) {
    await Promise.all(
      Array.from({ length: 100 }, (_, index) => {
        const trickles = (batch + index) % 2 === 1;
        return new Promise<void>((connected, fail) => {
          let isConnected = false;
          const socket = connect(port, '127.0.0.1', () => {
            isConnected = true;
            if (trickles) socket.write('GET /api/v0/hello HTTP/1.1\r\nHost: x\r\nX-Slow: ');
            connected();
          });
          let received = '';
          socket.setEncoding('latin1').on('data', (chunk: string) => (received += chunk));
          socket.once('error', (error) => (isConnected ? resets++ : fail(error)));
          socket.on('close', () => {
            closedAt.set(socket, Date.now());
            if (received.startsWith('HTTP/1.1 408 ') && received.includes('"request_timeout"')) answered408++;
          });
          sockets.push(socket);
        });
      }),
    );
  }
  const trickle = setInterval(() => {
    for (const [index, socket] of sockets.entries()) if (index % 2 === 1 && socket.writable) socket.write('a');
  }, 500);

  try {
    // A normal client, while slow connections are still held. Not "while every one is": on a loaded machine the first
    // batches can time out before the last is opened; the last batch was opened just now, so its connections are held.
    let servedMeanwhile = 0;
    for (let attempt = 0; attempt < 20 && closedAt.size < sockets.length; attempt++) {
      const result = await call('GET', `${server.api}/hello`);
      assert.equal(result.status, 200, `a normal request was not served while the slow connections were open: ${result.text}`);
      if (closedAt.size < sockets.length) servedMeanwhile++;
    }
    assert.ok(servedMeanwhile > 0, 'no normal request was answered while the slow connections were held');

    // The bound is a hang detector, not a timing check: every one is closed by the timeouts, however long that takes here.
    const deadline = openedAt + HANG_MS;
    while (closedAt.size < sockets.length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    const longest = Math.max(...[...closedAt.values()].map((at) => at - openedAt));
    console.log(
      `slow connections: ${sockets.length} held, ${closedAt.size} closed by the server (${answered408} answered 408 request_timeout, ` +
        `${resets} reset), last closed ${longest} ms after opening; ${servedMeanwhile} normal requests served meanwhile`,
    );
    assert.equal(closedAt.size, sockets.length, `${sockets.length - closedAt.size} slow connections were still open after ${HANG_MS} ms: the timeouts did not close them`);
    assert.equal((await call('GET', `${server.api}/hello`)).status, 200, 'the server stopped answering after the slow connections');
  } finally {
    clearInterval(trickle);
    for (const socket of sockets) socket.destroy();
  }
});
