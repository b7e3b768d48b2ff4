// How a request is framed: Expect (RFC 9110 §10.1.1) and Transfer-Encoding (RFC 9112 §6.1), answered with the envelope.
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { basic } from '../support/http.ts';
import { HANG_MS } from '../support/eventually.ts';
import { createAccount, createWorkspace, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';

let workspace: Workspace;
let server: ServerProcess;
let caller: Account;
let port: number;

before(async () => {
  workspace = createWorkspace();
  caller = await createAccount(workspace, 'framer');
  server = await startServer(workspace);
  port = Number(new URL(server.url).port);
});

after(async () => {
  await server.stop();
  workspace.cleanup();
});

/** Opens a connection, writes `head`, and resolves with the first bytes the server sends back (and the socket). */
function firstAnswer(head: string): Promise<{ text: string; socket: Socket }> {
  return new Promise((done, fail) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(head));
    socket.setEncoding('utf8');
    socket.once('data', (text: string) => done({ text, socket }));
    socket.once('error', fail);
  });
}

/**
 * Everything the server sends until it closes the connection (or `ms` pass: a hang detector, not a timing check; every
 * caller expects the close, so only a failure ever waits that long).
 */
function rest(socket: Socket, ms = HANG_MS): Promise<{ text: string; closed: boolean }> {
  return new Promise((done) => {
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      done({ text, closed: false });
    }, ms);
    socket.on('data', (chunk: string) => (text += chunk));
    socket.once('close', () => {
      clearTimeout(timer);
      done({ text, closed: true });
    });
  });
}

function parse(raw: string): { status: number; headers: Map<string, string>; body: any } {
  const [head = '', body = ''] = raw.split('\r\n\r\n', 2);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = new Map(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine.split(' ')[1]), headers, body: body === '' ? undefined : JSON.parse(body) };
}

function assertEnvelope(raw: string, status: number, code: string, what: string) {
  const answer = parse(raw);
  assert.equal(answer.status, status, `${what}: ${raw}`);
  assert.equal(answer.body?.messages?.[0]?.code, code, `${what}: ${raw}`);
  assert.match(answer.headers.get('x-request-id') ?? '', /./, `${what}: no X-Request-Id`);
  assert.equal(answer.headers.get('x-content-type-options'), 'nosniff', `${what}: not the usual headers`);
  return answer;
}

test('an Expect other than 100-continue is answered 417 expectation_failed in the envelope with the usual headers', async () => {
  for (const expect of ['foo', '100-continue-please', 'x=y']) {
    const { text, socket } = await firstAnswer(`GET /api/v0/hello HTTP/1.1\r\nHost: localhost\r\nExpect: ${expect}\r\nConnection: close\r\n\r\n`);
    const all = text + (await rest(socket)).text;
    assertEnvelope(all, 417, 'expectation_failed', `Expect: ${expect}`);
  }
});

test('a transfer coding other than chunked is 501 unsupported_transfer_coding, and the connection is closed', async () => {
  for (const coding of ['gzip, chunked', 'gzip', 'deflate']) {
    const { text, socket } = await firstAnswer(
      `POST /api/v0/hello HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: ${coding}\r\n\r\n8\r\nname=Ann\r\n0\r\n\r\n`,
    );
    const after = await rest(socket);
    const answer = assertEnvelope(text + after.text, 501, 'unsupported_transfer_coding', `Transfer-Encoding: ${coding}`);
    assert.equal(answer.headers.get('connection'), 'close', `Transfer-Encoding: ${coding}: the connection is kept`);
    assert.equal(after.closed, true, `Transfer-Encoding: ${coding}: the server did not close the connection`);
  }
  const chunked = await firstAnswer(
    'POST /api/v0/hello HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n8\r\nname=Ann\r\n0\r\n\r\n',
  );
  assert.equal(parse(chunked.text + (await rest(chunked.socket)).text).status, 200, 'plain chunked is refused');
});

test('Expect: 100-continue on a request that will be refused gets the refusal at once, never 100 Continue first', async () => {
  const cases = [
    ['too large by Content-Length', 'POST /api/v0/hello', { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': '1000000' }, 413],
    ['an unsupported media type', 'POST /api/v0/hello', { 'Content-Type': 'text/plain', 'Content-Length': '8' }, 415],
    ['an unknown path', 'POST /api/v0/nowhere', { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': '8' }, 404],
    ['no credentials on a private path', 'POST /api/v0/user', { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': '8' }, 401],
  ] as const;
  for (const [what, requestLine, headers, status] of cases) {
    const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    const { text, socket } = await firstAnswer(`${requestLine} HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\n${lines}\r\n`);
    assert.doesNotMatch(text, /^HTTP\/1\.1 100/, `${what}: 100 Continue was sent before the refusal`);
    const after = await rest(socket);
    const answer = parse(text + after.text);
    assert.equal(answer.status, status, `${what}: ${text}`);
    assert.equal(answer.headers.get('connection'), 'close', `${what}: the body was never read, so the connection must close`);
    assert.equal(after.closed, true, `${what}: the connection stayed open`);
  }
});

test('Expect: 100-continue on a request that will be served gets 100 Continue, then the answer, on a connection kept open', async () => {
  const { text, socket } = await firstAnswer(
    `POST /api/v0/user HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${basic(caller.username, caller.key)}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 8\r\nExpect: 100-continue\r\n\r\n`,
  );
  assert.match(text, /^HTTP\/1\.1 100 Continue\r\n\r\n/, `expected 100 Continue first, got ${text}`);
  const answered = new Promise<string>((done) => {
    let all = text.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '');
    const onData = (chunk: string) => {
      all += chunk;
      if (all.includes('}}')) {
        socket.off('data', onData);
        done(all);
      }
    };
    socket.on('data', onData);
    if (all.includes('}}')) done(all);
  });
  socket.write('name=Ann');
  const answer = parse(await answered);
  assert.equal(answer.status, 200);
  assert.equal(answer.body.data.name, 'Ann');
  assert.notEqual(answer.headers.get('connection'), 'close', 'a served 100-continue request closed its connection');
  socket.destroy();
});

test("Expect: 100-continue keeps the client's Connection: close, and a bodiless request keeps its connection and what is pipelined behind it", async () => {
  const closing = await firstAnswer(
    `POST /api/v0/hello HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 8\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
  );
  assert.match(closing.text, /^HTTP\/1\.1 100 Continue/);
  closing.socket.write('name=Ann');
  const closed = await rest(closing.socket);
  const answer = parse(closing.text.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '') + closed.text);
  assert.equal(answer.status, 200);
  assert.equal(answer.headers.get('connection'), 'close', 'the client asked for Connection: close and got keep-alive');
  assert.equal(closed.closed, true);

  const bodiless = 'GET /api/v0/hello HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\n\r\n';
  const all = await new Promise<string>((done, fail) => {
    let received = '';
    const socket = connect(port, '127.0.0.1', () => socket.write(`${bodiless}GET /api/v0/hello HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`));
    socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
    socket.on('error', fail).on('close', () => done(received));
  });
  assert.equal([...all.matchAll(/HTTP\/1\.1 200 /g)].length, 2, `the pipelined request after a bodiless Expect was not answered:\n${all}`);
});
