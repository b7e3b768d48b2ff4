// Generators of hostile HTTP requests for the fuzz tests: methods, paths, credentials, content types and bodies.
import fc from 'fast-check';

export interface FuzzRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer | null;
}

export interface FuzzCredentials {
  readonly username: string;
  readonly key: string;
  /** A second account's key, for cross-account attempts. */
  readonly otherKey: string;
}

const KNOWN_PATHS = ['/hello', '/user', '/account', '/settings', '/settings/timezones', '/openapi.json'];
const PARAM_NAMES = ['name', 'timezone', 'Name', 'TIMEZONE', '__proto__', 'constructor', '', 'name[]', 'a'];
const TIMEZONES = ['Europe/Paris', 'europe/paris', 'UTC', 'Mars/Olympus', 'America/Argentina/Buenos_Aires', ''];

/** Visible ASCII and spaces: what any HTTP client can put in a header value. */
const headerText = (maxLength: number) =>
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)), maxLength });

const percentJunk = fc.constantFrom('%', '%F', '%FF', '%C3%28', '%E2%82', '%00', '%0A', '%25', '%2F', '%ZZ', '%ED%A0%80', '+', '&', '=');

const value = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 2, arbitrary: fc.constantFrom(...TIMEZONES) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 20_000 }).map((size) => 'x'.repeat(size)) },
  { weight: 1, arbitrary: fc.constant('') },
);

const formBody = fc
  .tuple(
    fc.array(
      fc.tuple(fc.oneof(fc.constantFrom(...PARAM_NAMES), fc.string({ maxLength: 8 })), value, fc.array(percentJunk, { maxLength: 2 })),
      { maxLength: 30 },
    ),
    fc.constantFrom('&', '&', '&', '&&', ';'),
  )
  .map(([pairs, separator]) =>
    pairs.map(([name, text, junk]) => `${encodeURIComponent(name)}=${encodeURIComponent(text)}${junk.join('')}`).join(separator),
  );

const jsonBody = fc.oneof(
  fc.dictionary(fc.constantFrom(...PARAM_NAMES), value).map((object) => JSON.stringify(object)),
  fc.json({ maxDepth: 3 }),
  fc.constantFrom('{', '{"name":', '[]', 'null', '"name"', '{"name":"a","name":"b"}', '{"name":{"$gt":""}}', '1e999', '\u0000'),
);

const body = fc.oneof(
  { weight: 4, arbitrary: formBody.map((text) => Buffer.from(text, 'latin1')) },
  { weight: 2, arbitrary: jsonBody.map((text) => Buffer.from(text, 'utf8')) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)) },
  { weight: 1, arbitrary: fc.constant(Buffer.alloc(0)) },
  { weight: 1, arbitrary: fc.integer({ min: 15_000, max: 40_000 }).map((size) => Buffer.alloc(size, 'a')) },
);

const contentType = fc.option(
  fc.oneof(
    fc.constantFrom(
      'application/x-www-form-urlencoded',
      'application/x-www-form-urlencoded; charset=utf-8',
      'application/x-www-form-urlencoded; charset=latin1',
      'application/json',
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'text/plain',
      'multipart/form-data; boundary=x',
      'application/xml',
      '*/*',
      '',
      ';',
      'application/json, text/plain',
    ),
    headerText(30),
  ),
  { nil: undefined },
);

const path = fc
  .tuple(
    fc.constantFrom('/api/v0', '/api/v0', '/api/v0', '/api/v1', '/api', '', '/api/v0/', '//api/v0', '/API/V0', '/api/v0/..'),
    fc.oneof(
      { weight: 5, arbitrary: fc.constantFrom(...KNOWN_PATHS) },
      { weight: 1, arbitrary: fc.array(fc.oneof(fc.webSegment(), percentJunk), { maxLength: 4 }).map((parts) => `/${parts.join('/')}`) },
    ),
    fc.constantFrom('', '', '', '/', '?', '?name=x', '?timezone=UTC&timezone=UTC', '?%FF', '#frag', '?a=' + 'b'.repeat(3000)),
  )
  .map(([prefix, rest, suffix]) => `${prefix}${rest}${suffix}`);

function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

export function fuzzRequest(credentials: FuzzCredentials): fc.Arbitrary<FuzzRequest> {
  const authorization = fc.option(
    fc.oneof(
      fc.constant(basic(credentials.username, credentials.key)),
      fc.constant(basic(credentials.username.toUpperCase(), credentials.key)),
      fc.constant(basic(credentials.username, credentials.otherKey)),
      fc.constant(basic('nobody', credentials.key)),
      fc.constant(basic(credentials.username, `${credentials.key.slice(0, -1)}x`)),
      fc.constant(basic(credentials.username, credentials.key.replace('live', 'sandbox'))),
      fc.tuple(fc.string({ maxLength: 20 }), fc.string({ maxLength: 80 })).map(([user, password]) => basic(user, password)),
      headerText(100).map((text) => `Basic ${text}`),
      headerText(100),
      fc.constantFrom('Basic', 'Basic ', 'Bearer abc', 'basic Og==', 'Basic Og==', 'Basic ===='),
    ),
    { nil: undefined },
  );
  return fc
    .record({
      method: fc.constantFrom('GET', 'GET', 'POST', 'POST', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
      path,
      authorization,
      contentType,
      requestId: fc.option(headerText(150), { nil: undefined }),
      accept: fc.option(fc.constantFrom('application/json', 'text/html', '*/*', 'application/xml'), { nil: undefined }),
      ifNoneMatch: fc.option(fc.oneof(fc.constant('*'), headerText(40)), { nil: undefined }),
      body: fc.option(body, { nil: null }),
    })
    .map((generated) => {
      const headers: Record<string, string> = {};
      if (generated.authorization !== undefined) headers.authorization = generated.authorization;
      if (generated.contentType !== undefined) headers['content-type'] = generated.contentType;
      if (generated.requestId !== undefined) headers['x-request-id'] = generated.requestId;
      if (generated.accept !== undefined) headers.accept = generated.accept;
      if (generated.ifNoneMatch !== undefined) headers['if-none-match'] = generated.ifNoneMatch;
      const sendsBody = generated.body !== null && generated.method !== 'GET' && generated.method !== 'HEAD';
      return { method: generated.method, path: generated.path, headers, body: sendsBody ? generated.body : null };
    });
}
