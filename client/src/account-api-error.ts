// AccountApiError: every failure the client reports, from the server's envelope or from the network, as one typed error.
import type { ErrorCode } from './error-codes.ts';
import type { Message } from './types.ts';

export interface AccountApiErrorInit {
  /** HTTP status; 0 when no answer arrived (network failure, timeout) or the client refused to send. */
  readonly status: number;
  readonly code: ErrorCode;
  readonly message: string;
  readonly field?: string | undefined;
  readonly messages?: readonly Message[];
  readonly requestId?: string | undefined;
  readonly retryAfterSeconds?: number | undefined;
  readonly cause?: unknown;
}

export class AccountApiError extends Error {
  override readonly name = 'AccountApiError';
  /** HTTP status, or 0 when the server did not answer (`network_error`, `timeout`) or the client refused to send. */
  readonly status: number;
  /** The first message's code: switch on this, never on `message`. */
  readonly code: ErrorCode;
  /** The body parameter at fault, when there is one (`timezone` for `invalid_timezone`). */
  readonly field: string | undefined;
  /** Every message of the failure envelope (today the server sends exactly one). */
  readonly messages: readonly Message[];
  /** The answer's `X-Request-Id`, to quote when asking the operator about a failure. */
  readonly requestId: string | undefined;
  /** The answer's `Retry-After` in seconds (429 and 503 carry one). */
  readonly retryAfterSeconds: number | undefined;

  constructor(init: AccountApiErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.field = init.field;
    this.messages = init.messages ?? [{ code: init.code, message: init.message, ...(init.field === undefined ? {} : { field: init.field }) }];
    this.requestId = init.requestId;
    this.retryAfterSeconds = init.retryAfterSeconds;
  }
}
