// Malformed HTTP straight onto a socket: each gets a 4xx envelope or a closed connection, never a 5xx, a hang or a crash.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { call } from '../support/http.ts';
import { HANG_MS } from '../support/eventually.ts';
import { createWorkspace, startServer, type ServerProcess, type Workspace } from '../support/server-process.ts';
import { documentedCodes, problemWith } from './envelope-check.ts';

const RANDOM_PAYLOADS = Math.max(200, Math.floor(Number(process.env.FUZZ_REQUESTS ?? 100_000) / 100));
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);

let workspace: Workspace;
let server: ServerProcess;

before(async () => {
  workspace = createWorkspace({ LOG_LEVEL: 'warn', HEADERS_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '2000' });
  server = await startServer(workspace);
});

after(async () => {
  await server.stop();
  workspace.cleanup();
});

/** Writes the bytes, then reads until the server closes (or HANG_MS pass: a hang is a failure; not a timing check). */
function exchange(port: number, payload: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer and no close within ${HANG_MS} ms for ${JSON.stringify(payload.toString('latin1').slice(0, 120))}`));
    }, HANG_MS);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => undefined); // a reset is a close
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('latin1'));
    });
    socket.write(payload, () => socket.end());
  });
}

const MALFORMED = [
  'HELLO\r\n\r\n',
  'GET\r\n\r\n',
  'GET /api/v0/hello\r\n\r\n',
  'GET /api/v0/hello HTTP/9.9\r\nHost: x\r\n\r\n',
  'GET /api/v0/hello HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n',
  'GET /api/v0/hello HTTP/1.1\r\nHost: x\r\n: empty-name\r\n\r\n',
  'GET /api/v0/hello HTTP/1.1\r\nHost: x\r\nX: a\u0000b\r\n\r\n',
  'GET /api/v0/hello HTTP/1.1\nHost: x\n\n',
  'GET /api/v0/hello HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n',
  'GET /api/v0/hello HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n',
  'POST /api/v0/hello HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nname=x',
  'POST /api/v0/hello HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /api/v0/user HTTP/1.1\r\nHost: x\r\n\r\n',
  'POST /api/v0/hello HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/x-www-form-urlencoded\r\n\r\nzz\r\nname=x\r\n0\r\n\r\n',
  'POST /api/v0/hello HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n',
  'POST /api/v0/hello HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nname=short',
  `GET /api/v0/hello HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70_000)}\r\n\r\n`,
  `GET /${'a'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
  `GET /api/v0/hello HTTP/1.1\r\n${Array.from({ length: 3000 }, (_, i) => `X-H${i}: v`).join('\r\n')}\r\n\r\n`,
  'CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: x\r\n\r\n',
  'GET http://evil.example/api/v0/hello HTTP/1.1\r\nHost: x\r\n\r\n',
  'GET /api/v0/hello HTTP/1.1\r\nHost: x\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n',
  'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
  '\u0016\u0003\u0001\u0002\u0000\u0001\u0000\u0001\u00fc\u0003\u0003',
  'GET /api/v0/%%%% HTTP/1.1\r\nHost: x\r\n\r\n',
  'GET /api/v0/hello HTTP/1.1\r\nHost: x\r\nAuthorization: Basic \u00ff\u00fe\r\n\r\n',
  '\r\n\r\n\r\n',
];

function checkAnswer(raw: string, codes: ReturnType<typeof documentedCodes>, what: string): void {
  if (raw === '') return; // closed without an answer: allowed for bytes that are not HTTP at all
  // A socket may carry several answers (a valid request then garbage); check each.
  for (const answer of raw.split(/(?=HTTP\/1\.1 \d{3} )/).filter((part) => part.startsWith('HTTP/1.1 '))) {
    const status = Number(answer.slice(9, 12));
    const [head = '', body = ''] = answer.split('\r\n\r\n', 2);
    const contentType = /^content-type: *(.*)$/im.exec(head)?.[1];
    const problem = problemWith({ method: 'GET', status, contentType, body: Buffer.from(body, 'latin1').toString('utf8') }, codes);
    assert.equal(problem, undefined, `${problem} in the answer to ${what}:\n${answer.slice(0, 400)}`);
  }
}

test('hand-written malformed requests get a documented 4xx (or 501 for a transfer coding) or a closed connection', async () => {
  const codes = documentedCodes();
  const port = Number(new URL(server.url).port);
  for (const payload of MALFORMED) {
    const raw = await exchange(port, Buffer.from(payload, 'latin1'));
    checkAnswer(raw, codes, JSON.stringify(payload.slice(0, 120)));
  }
  assert.equal((await call('GET', `${server.api}/hello`)).status, 200, 'the server is alive afterwards');
});

test(`${RANDOM_PAYLOADS} generated byte streams get a documented 4xx or a closed connection (seed ${SEED})`, async () => {
  const codes = documentedCodes();
  const port = Number(new URL(server.url).port);
  const start = fc.constantFrom('GET / HTTP/1.1\r\n', 'POST /api/v0/hello HTTP/1.1\r\nHost: x\r\n', 'GET /api/v0/user HTTP/1.1\r\n', '');
  const payloads = fc.sample(
    fc.tuple(start, fc.uint8Array({ maxLength: 300 }), fc.constantFrom('', '\r\n\r\n')).map(([head, bytes, end]) =>
      Buffer.concat([Buffer.from(head, 'latin1'), Buffer.from(bytes), Buffer.from(end)]),
    ),
    { numRuns: RANDOM_PAYLOADS, seed: SEED },
  );
  let answered = 0;
  for (let i = 0; i < payloads.length; i += 20) {
    const raws = await Promise.all(payloads.slice(i, i + 20).map((payload) => exchange(port, payload)));
    raws.forEach((raw, j) => {
      if (raw !== '') answered++;
      checkAnswer(raw, codes, `generated payload ${i + j} (seed ${SEED})`);
    });
  }
  console.log(`raw fuzz: ${MALFORMED.length} hand-written and ${payloads.length} generated payloads, ${answered} of those answered, the rest closed`);
  assert.equal((await call('GET', `${server.api}/hello`)).status, 200, 'the server is alive afterwards');
});
