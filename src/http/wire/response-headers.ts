// The response headers both ports send, described once, and which answers carry which: the OpenAPI documents list them under
// components/headers.

interface HeaderDescription {
  readonly description: string;
  /** Sent on every answer it is listed for; false: sent when it applies (see the description). */
  readonly required: boolean;
  readonly schema: Readonly<Record<string, unknown>>;
}

export const RESPONSE_HEADERS = {
  'X-Request-Id': {
    description:
      'The id of this request: the X-Request-Id the client sent when it is one value of 1 to 128 letters, digits, ".", "_", ":" or "-" ' +
      '(and could not hold an API key), else a random UUID. Quote it when reporting a problem.',
    required: true,
    schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$', examples: ['3f1c9a4e-8d7b-4b1a-9c55-0d2e6f7a8b90'] },
  },
  'RateLimit-Limit': {
    description:
      'How many requests the budget this request spent allows per window. Sent on every answer that spent a budget (the API key, or the ' +
      'client address without credentials) and on every 429; not when a limit is switched off.',
    required: false,
    schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 1_000_000_000, examples: [600] },
  },
  'RateLimit-Remaining': {
    description: 'Requests left in this window of that budget. Sent with RateLimit-Limit.',
    required: false,
    schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 1_000_000_000, examples: [599] },
  },
  'RateLimit-Reset': {
    description: 'Seconds until that window ends and the budget is whole again. Sent with RateLimit-Limit.',
    required: false,
    schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 86_400, examples: [60] },
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    required: true,
    schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 86_400, examples: [1] },
  },
  'WWW-Authenticate': {
    description:
      'The challenge. The public API: Basic, realm "account-api" (on the sandbox, "account-api sandbox"), charset UTF-8. The admin API: ' +
      'Bearer, realm "account-api admin".',
    required: true,
    schema: { type: 'string', pattern: '^(Basic|Bearer) realm="', maxLength: 100, examples: ['Basic realm="account-api", charset="UTF-8"'] },
  },
  'Access-Control-Allow-Origin': {
    description:
      'The calling page\'s origin, sent back when the request\'s Origin is one of CORS_ORIGINS (with Access-Control-Allow-Credentials: true); ' +
      'absent otherwise, and always absent when CORS_ORIGINS is empty (the default): no other web page can read an answer.',
    required: false,
    schema: { type: 'string', pattern: '^https?://', examples: ['https://app.example.com'] },
  },
  Allow: {
    description: 'The methods this path takes.',
    required: true,
    schema: { type: 'string', examples: ['GET, HEAD, POST'] },
  },
  ETag: {
    description:
      'Names this version of the answer (the timezone list, or the account as GET /user or GET /settings shows it); send it back in ' +
      'If-None-Match to get a bodiless 304 while it is unchanged, and (on /user and /settings) in If-Match to write only over this version.',
    required: true,
    schema: { type: 'string', pattern: '^"[^"]+"$', examples: ['"tz-2025b-q3X0dJm1r9cUuH1w"'] },
  },
  'Idempotent-Replayed': {
    description:
      'true on an answer given again for a repeated Idempotency-Key: the first answer, byte for byte, and nothing was done twice. ' +
      'Absent on the first answer.',
    required: false,
    schema: { type: 'string', const: 'true' },
  },
  Vary: {
    description: 'The timezone list varies with Accept-Encoding: caches must keep each coding apart.',
    required: true,
    schema: { type: 'string', const: 'Accept-Encoding' },
  },
  'Content-Encoding': {
    description: 'gzip or br when the client asked for it in Accept-Encoding; absent when the body is sent as is.',
    required: false,
    schema: { type: 'string', enum: ['gzip', 'br'] },
  },
  Deprecation: {
    description: 'This path is deprecated (the deprecated /account alias of /user).',
    required: true,
    schema: { type: 'string', const: 'true' },
  },
  Link: {
    description: 'Where to move: the successor of this deprecated path.',
    required: true,
    schema: { type: 'string', pattern: 'rel="successor-version"', examples: ['</api/v0/user>; rel="successor-version"'] },
  },
  'API-Key-Expires': {
    description:
      'When the API key that authenticated this request expires (ISO 8601, UTC). Sent on every answer that key authenticates once it has ' +
      'less than 7 days left, so a client notices before it breaks: roll the key (account-api keys roll) and switch to its successor.',
    required: false,
    schema: { type: 'string', format: 'date-time', examples: ['2026-12-01T09:30:00.000Z'] },
  },
  'X-Environment': {
    description: 'Every answer of the sandbox says so.',
    required: true,
    schema: { type: 'string', const: 'sandbox' },
  },
} as const satisfies Record<string, HeaderDescription>;

export type ResponseHeader = keyof typeof RESPONSE_HEADERS;

export function isResponseHeader(name: string): name is ResponseHeader {
  return Object.hasOwn(RESPONSE_HEADERS, name);
}

/** The OpenAPI Header Object of one header. */
export function headerObject(name: ResponseHeader) {
  const { description, required, schema } = RESPONSE_HEADERS[name];
  return { description, required, schema };
}

// Which answers carry which headers, by status, on both ports (the OpenAPI documents turn each into a components/headers $ref).

/** Answered before any route, hook or budget (405, 408, 417, 431, 501): X-Request-Id only, never a route's own headers. */
export const BEFORE_ROUTE: ReadonlySet<number> = new Set([405, 408, 417, 431, 501]);
/** Sent by every answer that spent a budget; a 401 spent none (the failed attempt's 429 has its own). */
export const RATE_LIMIT_HEADERS: readonly ResponseHeader[] = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'];
const BY_STATUS: Readonly<Record<number, readonly ResponseHeader[]>> = {
  401: ['WWW-Authenticate'],
  405: ['Allow'],
  429: ['Retry-After'],
  503: ['Retry-After'],
};

/** The headers an answer of `status` carries; `afterBudget` are the port's own for answers that reached authentication. */
export function headersFor(status: number, afterBudget: readonly ResponseHeader[] = [], extra: readonly ResponseHeader[] = []): readonly ResponseHeader[] {
  const limits: readonly ResponseHeader[] = BEFORE_ROUTE.has(status) || status === 401 ? [] : [...RATE_LIMIT_HEADERS, ...afterBudget];
  return ['X-Request-Id', ...limits, ...(BY_STATUS[status] ?? []), ...extra];
}

/** In the form @fastify/swagger renders a response's headers. */
export function headerSchemas(headers: readonly ResponseHeader[]): Record<string, object> {
  return Object.fromEntries(headers.map((name) => [name, { description: RESPONSE_HEADERS[name].description, ...RESPONSE_HEADERS[name].schema }]));
}
