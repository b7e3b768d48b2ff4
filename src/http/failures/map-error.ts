// Turns any thrown value into a status, headers and failure messages: the one error mapper.
import type { FastifyError } from 'fastify';
import { isDomainError, type FailureKind } from '../../domain/errors.ts';
import type { Message } from '../wire/envelope.ts';
import { RepeatedValues } from '../wire/form-encoding.ts';
import { HttpError } from './http-error.ts';

export interface MappedError {
  readonly statusCode: number;
  readonly messages: readonly Message[];
  readonly headers: Readonly<Record<string, string>>;
  /**
   * True when the failure is a bug of ours (500): it is logged at error level with its stack. A 503 (an engine down, overload,
   * shutdown) is an expected answer, logged as a warning without a stack.
   */
  readonly unexpected: boolean;
}

const STATUS_BY_KIND: Readonly<Record<FailureKind, number>> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  precondition: 412,
  unavailable: 503,
  internal: 500,
};

interface AjvError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

const MALFORMED_BODY = 'The body must be form-encoded name=value pairs (as curl -d sends) or a JSON object whose values are strings.';

/** The answer for a body parameter the endpoint does not take; also given before a missing one (request-bodies.ts). */
export function unknownParameter(field: string): Message {
  return { code: 'unknown_parameter', message: `'${field}' is not a parameter of this endpoint.`, field };
}

function one(statusCode: number, message: Message, headers: Record<string, string> = {}): MappedError {
  return { statusCode, messages: [message], headers, unexpected: statusCode === 500 };
}

function fieldOf(instancePath: string): string {
  return instancePath.replace(/^\//, '').replace(/~1/g, '/').replace(/~0/g, '~');
}

/** Schema failures become the parameter-level codes clients switch on. */
function mapValidation(errors: readonly AjvError[], body: unknown): MappedError {
  const error = errors[0];
  if (error === undefined) return one(400, { code: 'invalid_parameter', message: 'The request is not valid.' });
  if (error.keyword === 'required') {
    const field = String(error.params.missingProperty);
    return one(400, { code: 'missing_parameter', message: `The parameter '${field}' is required.`, field });
  }
  if (error.keyword === 'additionalProperties') return one(400, unknownParameter(String(error.params.additionalProperty)));
  if (error.instancePath === '') return one(400, { code: 'malformed_body', message: MALFORMED_BODY });
  const field = fieldOf(error.instancePath);
  const value = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[field] : undefined;
  if (error.keyword === 'type' && value instanceof RepeatedValues) {
    return one(400, { code: 'duplicate_parameter', message: `The parameter '${field}' was given more than once; send it once.`, field });
  }
  if (error.keyword === 'type') {
    return one(400, { code: 'invalid_parameter', message: `The parameter '${field}' must be a string.`, field });
  }
  return one(400, { code: 'invalid_parameter', message: `The parameter '${field}' ${error.message ?? 'is not valid'}.`, field });
}

/** Fastify's own errors, by their stable codes: never shown to the caller in Fastify's words. */
function mapFramework(error: FastifyError): MappedError | null {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return one(413, { code: 'body_too_large', message: 'The request body is larger than this server accepts.' });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return one(415, {
        code: 'unsupported_media_type',
        message: 'Send the body as application/x-www-form-urlencoded (curl -d) or application/json.',
      });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return one(400, { code: 'malformed_body', message: MALFORMED_BODY });
    case 'FST_ERR_BAD_URL':
      return one(400, { code: 'malformed_url', message: 'The URL is not valid: check its percent-encoding.' });
    default:
      break;
  }
  if (error instanceof SyntaxError) return one(400, { code: 'malformed_body', message: MALFORMED_BODY });
  const status = error.statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    return one(status, { code: 'bad_request', message: 'The request could not be understood.' });
  }
  return null;
}

export function mapError(error: unknown, body: unknown): MappedError {
  if (error instanceof HttpError) return one(error.statusCode, error.toMessage(), { ...error.headers });
  if (isDomainError(error)) {
    const statusCode = STATUS_BY_KIND[error.kind];
    if (statusCode >= 500 && error.kind === 'internal') {
      return { ...one(500, { code: 'internal_error', message: 'Something went wrong on our side; it has been logged.' }), unexpected: true };
    }
    const message: Message =
      error.field === undefined
        ? { code: error.code, message: error.message }
        : { code: error.code, message: error.message, field: error.field };
    return one(statusCode, message, statusCode === 503 ? { 'Retry-After': '1' } : {});
  }
  if (typeof error === 'object' && error !== null) {
    const fastifyError = error as FastifyError & { validation?: AjvError[] };
    if (Array.isArray(fastifyError.validation)) return mapValidation(fastifyError.validation, body);
    const mapped = mapFramework(fastifyError);
    if (mapped !== null) return mapped;
  }
  return one(500, { code: 'internal_error', message: 'Something went wrong on our side; it has been logged.' });
}
