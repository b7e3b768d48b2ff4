// Failures that exist only because of HTTP (unknown path, wrong method, bad credentials header...).
import type { Message } from '../wire/envelope.ts';

export class HttpError extends Error {
  readonly statusCode: number;
  readonly code: string;
  readonly field: string | undefined;
  readonly headers: Readonly<Record<string, string>>;

  constructor(statusCode: number, code: string, message: string, options: { field?: string; headers?: Record<string, string> } = {}) {
    super(message);
    this.name = 'HttpError';
    this.statusCode = statusCode;
    this.code = code;
    this.field = options.field;
    this.headers = options.headers ?? {};
  }

  toMessage(): Message {
    return this.field === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, field: this.field };
  }
}
