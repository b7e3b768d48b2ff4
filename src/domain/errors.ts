// Typed failures raised by domain rules and stores; the HTTP layer maps `kind` to a status in one place.

/** What went wrong, independent of any transport. */
export type FailureKind =
  | 'invalid' // the caller sent something that breaks a rule (400)
  | 'unauthenticated' // credentials missing or wrong (401)
  | 'forbidden' // authenticated, but not allowed (403)
  | 'not_found' // the thing named does not exist (404)
  | 'conflict' // it already exists, or another request holds it (409)
  | 'precondition' // the caller's condition on the current state does not hold (412)
  | 'unavailable' // a dependency is down; try again (503)
  | 'internal'; // a bug (500)

export interface DomainErrorOptions {
  field?: string;
  cause?: unknown;
}

/**
 * A failure with a stable snake_case `code` that clients can switch on and a sentence
 * a person can act on. Domain rules and stores throw these; nothing else needs to.
 */
export class DomainError extends Error {
  readonly kind: FailureKind;
  readonly code: string;
  readonly field: string | undefined;

  constructor(kind: FailureKind, code: string, message: string, options: DomainErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DomainError';
    this.kind = kind;
    this.code = code;
    this.field = options.field;
  }
}

export function isDomainError(error: unknown): error is DomainError {
  return error instanceof DomainError;
}
