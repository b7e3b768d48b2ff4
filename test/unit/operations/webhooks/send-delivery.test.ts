// One attempt: to the address checked (never a second resolution), no redirect followed, a private address refused.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { sendDelivery } from '../../../../src/operations/webhooks/send-delivery.ts';
import { newSigningSecret } from '../../../../src/domain/webhooks/signature.ts';

let port = 0;
const hosts: string[] = [];
const server = createServer((request, response) => {
  hosts.push(String(request.headers.host));
  if (request.url === '/moved') response.writeHead(302, { location: 'http://169.254.169.254/' }).end();
  else response.writeHead(200).end('x'.repeat(1000));
});

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
after(() => server.close());

const base = { secret: newSigningSecret(), eventId: 'evt_1', body: '{}', userAgent: 'test' };

test('connects to the address the check resolved, sending the name as Host', async () => {
  const result = await sendDelivery({ ...base, url: `http://hooks.example:${port}/ok`, allowPrivate: true, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
  assert.equal(result.succeeded, true, result.error ?? '');
  assert.equal(hosts.at(-1), `hooks.example:${port}`);
  assert.equal(result.response!.length, 256, 'only the first bytes of the answer are kept');
});

test('a redirect is a failure, not followed', async () => {
  const before = hosts.length;
  const result = await sendDelivery({ ...base, url: `http://127.0.0.1:${port}/moved`, allowPrivate: true });
  assert.equal(result.succeeded, false);
  assert.equal(result.status, 302);
  assert.equal(hosts.length, before + 1, 'one request, no second one to the Location');
});

test('a name resolving to a private address is refused at delivery time without connecting', async () => {
  const before = hosts.length;
  const result = await sendDelivery({ ...base, url: `http://rebound.example:${port}/ok`, allowPrivate: false, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
  assert.equal(result.succeeded, false);
  assert.equal(result.status, null);
  assert.match(result.error!, /private, loopback or link-local/);
  assert.equal(hosts.length, before);
});

test('an IPv6 address carrying a private IPv4 one, or in a special range, is refused at every attempt without connecting', async () => {
  const before = hosts.length;
  for (const literal of ['[::127.0.0.1]', '[::ffff:0:127.0.0.1]', '[2002:7f00:1::]', '[64:ff9b:1::7f00:1]', '[64:ff9b::a9fe:a9fe]', '[2001:20::1]']) {
    const result = await sendDelivery({ ...base, url: `http://${literal}:${port}/ok`, allowPrivate: false });
    assert.equal(result.succeeded, false, literal);
    assert.match(result.error ?? '', /not a public address/, `${literal}: ${result.error}`);
  }
  // A name resolving to one of them, as at delivery time after `webhooks add` accepted it.
  const rebound = await sendDelivery({ ...base, url: `http://hooks.example:${port}/ok`, allowPrivate: false, resolve: async () => [{ address: '::ffff:0:7f00:1', family: 6 }] });
  assert.match(rebound.error ?? '', /it carries 127\.0\.0\.1: Loopback/);
  assert.equal(hosts.length, before, 'nothing was sent');
});

test('no answer within the timeout is a failure saying so', async () => {
  const silent = createServer(() => undefined);
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  try {
    const result = await sendDelivery({ ...base, url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`, allowPrivate: true, timeoutMs: 200 });
    assert.equal(result.succeeded, false);
    assert.match(result.error!, /no answer within/);
  } finally {
    silent.closeAllConnections();
    silent.close();
  }
});

/** A receiver that answers `status` with `first` at once and then never ends its body, one byte at a time; says when its socket closed. */
async function dribbler(first: string, status = 200): Promise<{ url: string; closed: Promise<unknown>; server: Server }> {
  let sawClose: (value: unknown) => void = () => undefined;
  const closed = new Promise((resolve) => (sawClose = resolve));
  const server = createServer((request, response) => {
    request.resume();
    response.writeHead(status, { 'content-type': 'text/plain' });
    response.write(first);
    const drip = setInterval(() => response.write('.'), 20);
    request.socket.once('close', () => {
      clearInterval(drip);
      sawClose(true);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, closed, server };
}

test('once the status and the 256-byte excerpt are in, the answer is read no further: the sender closes the connection', async () => {
  const receiver = await dribbler(`accepted ${'x'.repeat(300)}`);
  try {
    const result = await sendDelivery({ ...base, url: receiver.url, allowPrivate: true });
    assert.equal(result.error, null, 'the answer was not read to its (never coming) end');
    assert.equal(result.succeeded, true);
    assert.equal(result.status, 200);
    assert.equal(result.response, `accepted ${'x'.repeat(256 - 9)}`);
    assert.equal(await receiver.closed, true, "the receiver saw its socket closed by the sender");
  } finally {
    receiver.server.closeAllConnections();
    receiver.server.close();
  }
});

test('a status that came in time is the answer, with what arrived of the excerpt, even if the rest of the body never ends', async () => {
  const receiver = await dribbler('queued', 202);
  try {
    const result = await sendDelivery({ ...base, url: receiver.url, allowPrivate: true, timeoutMs: 300 });
    assert.equal(result.succeeded, true, result.error ?? '');
    assert.equal(result.status, 202);
    assert.match(result.response!, /^queued\.*$/);
    assert.equal(await receiver.closed, true);
  } finally {
    receiver.server.closeAllConnections();
    receiver.server.close();
  }
});
