// Test helpers for the client: a fetch that records every exchange it passes through, a sleep that records its delays,
// and an assertion for the AccountApiError a call must throw.
import assert from 'node:assert/strict';
import { AccountApiError } from '../../client/src/index.ts';

export interface RecordedExchange {
  readonly method: string;
  readonly url: string;
  readonly requestHeaders: Headers;
  readonly body: string | undefined;
  /** The HTTP status, or `no answer` when fetch itself failed (refused connection, timeout). */
  status: number | 'no answer';
  responseHeaders?: Headers;
}

/** Wraps the platform's fetch: real requests, real answers, each one written down. */
export function recordingFetch(): { fetch: typeof globalThis.fetch; exchanges: RecordedExchange[] } {
  const exchanges: RecordedExchange[] = [];
  const recording: typeof globalThis.fetch = async (input, init) => {
    const exchange: RecordedExchange = {
      method: init?.method ?? 'GET',
      url: String(input),
      requestHeaders: new Headers(init?.headers),
      body: typeof init?.body === 'string' ? init.body : undefined,
      status: 'no answer',
    };
    exchanges.push(exchange);
    const response = await fetch(input, init);
    exchange.status = response.status;
    exchange.responseHeaders = response.headers;
    return response;
  };
  return { fetch: recording, exchanges };
}

/** Records each requested delay; resolves at once unless `wait` is set, in which case it really waits that long. */
export function recordingSleep(options: { wait?: boolean } = {}): { sleep: (ms: number) => Promise<void>; delays: number[] } {
  const delays: number[] = [];
  const sleep = async (ms: number) => {
    delays.push(ms);
    if (options.wait === true) await new Promise((resolve) => setTimeout(resolve, ms));
  };
  return { sleep, delays };
}

type Expected = Partial<Pick<AccountApiError, 'status' | 'code' | 'field' | 'requestId' | 'retryAfterSeconds'>>;

/** Runs `action`, which must throw an AccountApiError with the `expected` fields, and returns that error. */
export async function expectApiError(action: () => unknown, expected: Expected): Promise<AccountApiError> {
  let thrown: unknown;
  try {
    await action();
  } catch (error) {
    thrown = error;
  }
  if (!(thrown instanceof AccountApiError)) {
    assert.fail(`expected an AccountApiError ${JSON.stringify(expected)}, got ${thrown === undefined ? 'success' : String(thrown)}`);
  }
  const actual = Object.fromEntries(Object.keys(expected).map((key) => [key, thrown[key as keyof Expected]]));
  assert.deepEqual(actual, expected, `AccountApiError differs from what was expected: ${thrown.status} ${thrown.code}: ${thrown.message}`);
  return thrown;
}
