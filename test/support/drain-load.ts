// Test support: load for shutdown tests: requests on a keep-alive pool, each classified by how a draining server ended it.
import type { Agent } from 'node:http';
import { request } from 'node:http';
import { basic } from './http.ts';
import type { Account } from './server-process.ts';

export type Outcome =
  | { kind: 'ok' }
  | { kind: 'shutting_down' }
  /** A new connection the closing listener refused or reset unread: the client knows nothing was done. */
  | { kind: 'refused' }
  | { kind: 'failed'; why: string };

/** One request on a keep-alive pool, alternately a write and a read; classified by how it ended during a drain. */
export function loadRequest(agent: Agent, port: number, auth: Account, index: number): Promise<Outcome> {
  const write = index % 2 === 0;
  const body = write ? new URLSearchParams({ name: `Alice ${index}` }).toString() : undefined;
  return new Promise((done) => {
    const outgoing = request(
      {
        agent,
        host: '127.0.0.1',
        port,
        method: write ? 'POST' : 'GET',
        path: write ? '/api/v0/user' : '/api/v0/hello',
        headers: {
          authorization: basic(auth.username, auth.key),
          ...(write ? { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body!) } : {}),
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        response.on('error', (error) => done({ kind: 'failed', why: `response cut: ${error.message}` }));
        response.on('end', () => {
          if (!response.complete) return done({ kind: 'failed', why: `incomplete ${response.statusCode} response` });
          if (response.statusCode === 200) return done({ kind: 'ok' });
          const code = (() => {
            try {
              return JSON.parse(text).messages[0].code;
            } catch {
              return undefined;
            }
          })();
          if (response.statusCode === 503 && code === 'shutting_down' && response.headers.connection === 'close') {
            return done({ kind: 'shutting_down' });
          }
          done({ kind: 'failed', why: `HTTP ${response.statusCode} ${text} (Connection: ${response.headers.connection})` });
        });
      },
    );
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      // A new connection is refused once the listener is closed, or reset if the kernel had completed it in the listen backlog
      // just before: either way no byte of it was read by the server, and nothing was done.
      if ((error.code === 'ECONNREFUSED' || error.code === 'ECONNRESET') && !outgoing.reusedSocket) done({ kind: 'refused' });
      else done({ kind: 'failed', why: `${error.code ?? error.message} on a ${outgoing.reusedSocket ? 'kept-alive' : 'new'} connection` });
    });
    outgoing.end(body);
  });
}
