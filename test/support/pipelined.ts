// Test support: HTTP/1.1 requests written all at once on one connection (pipelined), as a client that does not wait would.
import { connect } from 'node:net';

/** Writes every request on one connection at once and returns the status of each answer, in order. */
export function pipelined(url: string, requests: readonly string[]): Promise<number[]> {
  const { hostname, port } = new URL(url);
  return new Promise((done, fail) => {
    const socket = connect(Number(port), hostname, () => socket.write(requests.join('')));
    let received = '';
    const statuses = () => [...received.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
      if (statuses().length >= requests.length) socket.end();
    });
    socket.on('error', fail);
    socket.on('close', () => done(statuses()));
  });
}

/** One GET as written on the wire, for pipelined(). */
export function rawGet(path: string, headers: Record<string, string>): string {
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return `GET ${path} HTTP/1.1\r\nHost: localhost\r\n${lines.join('')}\r\n`;
}
