// One call over HTTP with the client's policies: per-attempt timeout, retries with backoff, and failures as AccountApiError.
import { AccountApiError } from './account-api-error.ts';
import type { Message } from './types.ts';
import { isRetryable, parseRetryAfter, retryDelayMs, type Outcome, type RetryPolicy } from './retry-policy.ts';

export interface TransportOptions {
  readonly apiUrl: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly retry: RetryPolicy;
  readonly fetch: typeof globalThis.fetch;
  readonly sleep: (ms: number) => Promise<void>;
}

export interface Call {
  readonly method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Below the API's prefix (/api/v0, or /admin/v0 for AdminClient), such as `/user`; may carry a query string. */
  readonly path: string;
  /** Sent form-encoded, as the specification says POST bodies are. */
  readonly form?: Readonly<Record<string, string>>;
  readonly headers?: Readonly<Record<string, string>>;
}

/** A GET, or a write with an Idempotency-Key: repeating it changes nothing more than sending it once. */
function isIdempotent(call: Call): boolean {
  return call.method === 'GET' || call.headers?.['idempotency-key'] !== undefined;
}

/** An HTTP answer, read in full; `body` is the parsed JSON, or undefined when the body is empty or not JSON. */
export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: unknown;
}

/** Sends a call, repeating it while the retry policy allows; resolves with the last answer, whatever its status. */
export async function exchange(options: TransportOptions, call: Call): Promise<Answer> {
  for (let retry = 0; ; retry++) {
    let outcome: Outcome;
    let retryAfterSeconds: number | undefined;
    try {
      const answer = await attempt(options, call);
      outcome = { kind: 'answer', status: answer.status, code: firstCode(answer.body) };
      retryAfterSeconds = parseRetryAfter(answer.headers.get('retry-after'));
      if (retry >= options.retry.retries || !isRetryable(call.method, outcome, isIdempotent(call))) return answer;
    } catch (error) {
      if (!(error instanceof AccountApiError) || retry >= options.retry.retries || !isRetryable(call.method, { kind: 'no-answer' }, isIdempotent(call))) throw error;
    }
    await options.sleep(retryDelayMs(options.retry, retry, retryAfterSeconds));
  }
}

async function attempt(options: TransportOptions, call: Call): Promise<Answer> {
  const url = `${options.apiUrl}${call.path}`;
  const headers: Record<string, string> = { ...options.headers, ...call.headers };
  let body: string | undefined;
  if (call.form !== undefined) {
    body = new URLSearchParams(call.form).toString();
    headers['content-type'] = 'application/x-www-form-urlencoded';
  }
  // One timeout per attempt, covering the body too: a server that sends headers and then stalls is also timed out.
  const signal = AbortSignal.timeout(options.timeoutMs);
  try {
    const response = await options.fetch(url, { method: call.method, headers, body, signal });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: parseJson(text) };
  } catch (error) {
    if (signal.aborted) {
      throw new AccountApiError({ status: 0, code: 'timeout', message: `No answer to ${call.method} ${url} within ${options.timeoutMs} ms.`, cause: error });
    }
    const reason = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
    throw new AccountApiError({ status: 0, code: 'network_error', message: `Could not reach ${url}: ${reason}`, cause: error });
  }
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The first message's code of a failure envelope, if the body is one. */
function firstCode(body: unknown): string | undefined {
  const messages = (body as { messages?: unknown } | undefined)?.messages;
  return Array.isArray(messages) && isMessage(messages[0]) ? messages[0].code : undefined;
}

function isMessage(value: unknown): value is Message {
  if (typeof value !== 'object' || value === null) return false;
  const { code, message, field } = value as Record<string, unknown>;
  return typeof code === 'string' && typeof message === 'string' && (field === undefined || typeof field === 'string');
}

/** The error an answer that is not a success stands for: the envelope's first message, or `invalid_response` without one. */
export function failureOf(answer: Answer, what: string): AccountApiError {
  const requestId = answer.headers.get('x-request-id') ?? undefined;
  const retryAfterSeconds = parseRetryAfter(answer.headers.get('retry-after'));
  const messages = (answer.body as { messages?: unknown } | undefined)?.messages;
  if (answer.status >= 400 && Array.isArray(messages) && messages.length > 0 && messages.every(isMessage)) {
    const [first] = messages as [Message, ...Message[]];
    return new AccountApiError({ status: answer.status, code: first.code, message: first.message, field: first.field, messages, requestId, retryAfterSeconds });
  }
  return new AccountApiError({
    status: answer.status,
    code: 'invalid_response',
    message: `${what} answered HTTP ${answer.status} without the API's envelope (is the base URL right?).`,
    requestId,
    retryAfterSeconds,
  });
}
