// Test support: one HTTP call to the running server, with Basic credentials and form or JSON bodies.
import { get, type IncomingHttpHeaders } from 'node:http';

export interface CallOptions {
  readonly auth?: { readonly username: string; readonly key: string } | string;
  readonly form?: Record<string, string> | string;
  readonly json?: unknown;
  readonly headers?: Record<string, string>;
  readonly body?: string;
}

export interface CallResult {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The parsed JSON body, or undefined when it is not JSON. */
  readonly body: any;
}

export function basic(username: string, key: string): string {
  return `Basic ${Buffer.from(`${username}:${key}`, 'utf8').toString('base64')}`;
}

export async function call(method: string, url: string, options: CallOptions = {}): Promise<CallResult> {
  const headers: Record<string, string> = { ...options.headers };
  if (typeof options.auth === 'string') headers.authorization = options.auth;
  else if (options.auth !== undefined) headers.authorization = basic(options.auth.username, options.auth.key);
  let body: string | undefined = options.body;
  if (options.form !== undefined) {
    body = typeof options.form === 'string' ? options.form : new URLSearchParams(options.form).toString();
    headers['content-type'] ??= 'application/x-www-form-urlencoded';
  } else if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetchOnce(url, { method, headers, body });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, text, body: parsed };
}

/**
 * fetch, sent once more when a kept-alive connection it reused turns out closed: the server ends a connection idle for
 * KEEP_ALIVE_TIMEOUT_MS, and on a loaded machine the client's own timer (which gives such a connection up a little sooner)
 * can run late, so the request goes out on a connection the server is closing and meets "other side closed" before any
 * answer. Node's documentation gives the same advice for its http agent (retry a request on a reused socket). A connection
 * that had carried no earlier answer (bytesRead 0) is not such a case, and its failure is the test's.
 */
async function fetchOnce(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    const cause = (error as { cause?: { code?: string; socket?: { bytesRead?: number } } }).cause;
    if (cause?.code !== 'UND_ERR_SOCKET' || !((cause.socket?.bytesRead ?? 0) > 0)) throw error;
    return fetch(url, init);
  }
}

/** Asserts the documented failure envelope and returns its first message. */
export function failureMessage(result: CallResult): { code: string; message: string; field?: string } {
  const { body } = result;
  if (body === undefined) throw new Error(`expected a JSON failure envelope, got: ${result.text}`);
  const expectedStatus = result.status >= 500 ? 'error' : 'fail';
  if (body.status !== expectedStatus || body.data !== null || JSON.stringify(body.meta) !== '{}' || !Array.isArray(body.messages) || body.messages.length === 0) {
    throw new Error(`not a failure envelope (HTTP ${result.status}): ${result.text}`);
  }
  return body.messages[0];
}

/** A GET through node:http, which (unlike fetch) hands the body over exactly as sent, still compressed. */
export function rawGet(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((done, fail) => {
    get(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => done({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) }));
    }).on('error', fail);
  });
}
