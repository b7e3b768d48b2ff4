// The response envelope {status, messages, meta, data}: the only place either form of it is built.

export interface Message {
  readonly code: string;
  readonly message: string;
  readonly field?: string;
}

export interface SuccessEnvelope<T> {
  readonly status: 'success';
  readonly messages: readonly [];
  readonly meta: Record<string, unknown>;
  readonly data: T;
}

export interface FailureEnvelope {
  readonly status: 'fail' | 'error';
  readonly messages: readonly Message[];
  readonly meta: Record<string, never>;
  readonly data: null;
}

export function success<T>(data: T, meta: Record<string, unknown> = {}): SuccessEnvelope<T> {
  return { status: 'success', messages: [], meta, data };
}

/** `fail` when the caller can fix it (4xx), `error` when the server failed (5xx). */
export function failure(statusCode: number, messages: readonly Message[]): FailureEnvelope {
  return { status: statusCode >= 500 ? 'error' : 'fail', messages, meta: {}, data: null };
}
