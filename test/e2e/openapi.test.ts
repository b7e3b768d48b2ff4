// The OpenAPI document: valid OpenAPI 3.1, complete, generated from the route schemas, and true of the running servers.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { DISPLAY_NAME_MAX_LENGTH } from '../../src/domain/names.ts';
import { loadTimezoneCatalog } from '../../src/domain/timezones.ts';
import { createMetrics } from '../../src/http/observability/metrics.ts';
import { FAILURE_CODES } from '../../src/http/failures/failure-codes.ts';
import { demoAccounts } from '../../src/sandbox/demo-accounts.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { call, type CallOptions, type CallResult } from '../support/http.ts';
import { createAccount, createWorkspace, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';

type Reference = { $ref: string };
type Header = { description: string; required?: boolean; schema: { type?: string } };
type Response = { description: string; headers?: Record<string, Reference>; content?: Record<string, { schema: Reference }> };
type Operation = {
  operationId?: string;
  summary?: string;
  description?: string;
  deprecated?: boolean;
  security?: Record<string, string[]>[];
  'x-premium-required'?: boolean;
  requestBody?: { content: Record<string, { schema: { properties: Record<string, { examples?: string[]; minLength?: number; maxLength?: number; description?: string }> } }> };
  responses: Record<string, Response>;
};
type Document = {
  openapi: string;
  info: { title: string; version: string; contact?: { name?: string; url?: string; email?: string }; license?: { name: string; identifier?: string; url?: string } };
  paths: Record<string, Record<string, Operation>>;
  servers: { url: string; description?: string }[];
  components: { schemas: Record<string, any>; headers: Record<string, Header>; securitySchemes: Record<string, any> };
};

/** One server under test, its document, and validators compiled against that document. */
interface Target {
  readonly name: string;
  readonly server: ServerProcess;
  readonly doc: Document;
  readonly premium: Account;
  readonly basic: Account;
  readonly ajv: Ajv2020;
  readonly validators: Map<string, ValidateFunction>;
}

let workspace: Workspace;
let live: Target;
let sandbox: Target;

async function target(name: string, server: ServerProcess, premium: Account, basic: Account): Promise<Target> {
  const response = await call('GET', `${server.api}/openapi.json`);
  assert.equal(response.status, 200, `${name}: GET /api/v0/openapi.json answered ${response.status}`);
  const doc = response.body as Document;
  // The whole document under one id, so that a response's `$ref: '#/components/...'` resolves as it does in the document.
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema(doc, `${name}.json`);
  return { name, server, doc, premium, basic, ajv, validators: new Map() };
}

before(async () => {
  // The sandbox's per-address budget is small, so that a test can spend it and see the documented 429.
  workspace = createWorkspace({ LOG_LEVEL: 'warn' });
  const alice = await createAccount(workspace, 'alice', { name: 'Alice' });
  const basicAccount = await createAccount(workspace, 'basic', { premium: false });
  const [liveServer, sandboxServer] = await Promise.all([
    startServer(workspace),
    startServer(workspace, ['--sandbox'], { RATE_LIMIT_PER_ADDRESS: '30' }),
  ]);
  const [demo, demoBasic] = demoAccounts().map((account) => ({ username: account.username, key: account.key.token }));
  live = await target('live', liveServer, alice, basicAccount);
  sandbox = await target('sandbox', sandboxServer, demo!, demoBasic!);
});

after(async () => {
  await Promise.all([live?.server.stop(), sandbox?.server.stop()]);
  workspace.cleanup();
});

const ENDPOINTS = [
  ['get', '/api/v0/hello'],
  ['post', '/api/v0/hello'],
  ['get', '/api/v0/settings'],
  ['post', '/api/v0/settings'],
  ['get', '/api/v0/settings/timezones'],
  ['get', '/api/v0/user'],
  ['post', '/api/v0/user'],
  ['get', '/api/v0/account'],
  ['post', '/api/v0/account'],
] as const;

/** The operationIds: the client's method names (client/src/client.ts), and the alias's own. */
const OPERATION_IDS: Record<string, string> = {
  'get /api/v0/hello': 'hello',
  'post /api/v0/hello': 'sayHello',
  'get /api/v0/settings': 'getSettings',
  'post /api/v0/settings': 'updateSettings',
  'get /api/v0/settings/timezones': 'listTimezones',
  'get /api/v0/user': 'getUser',
  'post /api/v0/user': 'updateUser',
  'get /api/v0/account': 'getAccount',
  'post /api/v0/account': 'updateAccount',
};

/** Every status each operation can answer, read from the hooks in src/app.ts and src/http/*.ts. */
function expectedStatuses(method: string, path: string): string[] {
  const premium = !path.endsWith('/hello');
  const body = method === 'post';
  const updatesAccount = body && premium;
  // GET /user, /settings (and /account) answer 304 to their ETag, as the timezone list does; their POSTs take If-Match and Idempotency-Key.
  const conditionalRead = !body && premium;
  return [
    conditionalRead ? ['200', '304'] : ['200'],
    ['400', '401'],
    premium ? ['403'] : [],
    updatesAccount ? ['404'] : [],
    ['405', '408'],
    updatesAccount ? ['409', '412'] : [],
    body ? ['413', '415'] : [],
    // An Expect other than 100-continue, a Transfer-Encoding other than chunked: any operation (request-framing.ts).
    ['417'],
    updatesAccount ? ['422'] : [],
    ['429', '431', '500', '501', '503'],
  ].flat();
}

/** Answered before any route: they carry none of a route's own headers (rate limits, the alias's Deprecation). */
const BEFORE_ROUTE = new Set(['405', '408', '417', '431', '501']);

/** Headers the document leaves to docs/api.md ("Headers on every answer"): HTTP's framing, caching and browser security headers. */
const UNDOCUMENTED_HEADERS = new Set([
  'cache-control',
  'connection',
  'content-length',
  'content-security-policy',
  'content-type',
  'cross-origin-resource-policy',
  'date',
  'keep-alive',
  'referrer-policy',
  'strict-transport-security',
  'transfer-encoding',
  'x-content-type-options',
  'x-frame-options',
]);

function operation(doc: Document, method: string, path: string): Operation {
  const found = doc.paths[path]?.[method];
  assert.ok(found !== undefined, `the document has no ${method.toUpperCase()} ${path}`);
  return found;
}

/** The header parameters an operation takes, as {in, name, required}. */
function headerParameters(doc: Document, method: string, path: string): { in: string; name: string; required: boolean }[] | undefined {
  const parameters = (operation(doc, method, path) as { parameters?: { in: string; name: string; required: boolean }[] }).parameters;
  return parameters?.map(({ in: where, name, required }) => ({ in: where, name, required }));
}

function component<T>(doc: Document, reference: Reference, kind: 'schemas' | 'headers'): T {
  const prefix = `#/components/${kind}/`;
  assert.ok(reference.$ref?.startsWith(prefix), `expected a $ref to ${prefix}..., got ${JSON.stringify(reference)}`);
  const found = (doc.components[kind] as Record<string, T>)[reference.$ref.slice(prefix.length)];
  assert.ok(found !== undefined, `${reference.$ref} does not resolve`);
  return found;
}

/** Names of the headers a response documents, each checked to be a $ref to components/headers. */
function documentedHeaders(doc: Document, response: Response): Map<string, Header> {
  return new Map(Object.entries(response.headers ?? {}).map(([name, reference]) => [name, component<Header>(doc, reference, 'headers')]));
}

function forEachResponse(doc: Document, visit: (where: string, status: string, response: Response, method: string, path: string) => void): void {
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(operations)) {
      for (const [status, response] of Object.entries(op.responses)) visit(`${method.toUpperCase()} ${path} ${status}`, status, response, method, path);
    }
  }
}

describe('the document', () => {
  test('is valid OpenAPI 3.1, live and sandbox', async () => {
    for (const { name, doc } of [live, sandbox]) {
      assert.equal(doc.openapi, '3.1.0');
      const result = await new Validator().validate(structuredClone(doc) as never);
      assert.equal(result.valid, true, `${name}: the validator says: ${JSON.stringify(result.errors)}`);
    }
  });

  test('has exactly the API operations (HEAD aside), each with a summary and a description', () => {
    const listed = Object.entries(live.doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods)
        .filter((method) => method !== 'head')
        .map((method) => `${method} ${path}`),
    );
    assert.deepEqual(listed.sort(), ENDPOINTS.map(([method, path]) => `${method} ${path}`).sort());
    for (const [method, path] of ENDPOINTS) {
      assert.ok(operation(live.doc, method, path).summary, `${method} ${path} has no summary`);
      assert.ok(operation(live.doc, method, path).description, `${method} ${path} has no description`);
    }
  });

  test('names every operation with a unique operationId: the client method that calls it', () => {
    for (const [method, path] of ENDPOINTS) {
      assert.equal(operation(live.doc, method, path).operationId, OPERATION_IDS[`${method} ${path}`], `the operationId of ${method.toUpperCase()} ${path}`);
    }
  });

  test('says who to contact (the servers and the licence are in openapi-info.test.ts)', () => {
    assert.ok(live.doc.info.contact?.name, 'info.contact should name whom to ask');
  });

  test('declares Basic security; private operations require it and are marked Premium, /hello takes it optionally', () => {
    assert.deepEqual(live.doc.components.securitySchemes.basicAuth, {
      type: 'http',
      scheme: 'basic',
      description: live.doc.components.securitySchemes.basicAuth.description,
    });
    for (const [method, path] of ENDPOINTS) {
      const op = operation(live.doc, method, path);
      if (path === '/api/v0/hello') {
        assert.deepEqual(op.security, [{}, { basicAuth: [] }]);
        assert.equal(op['x-premium-required'], undefined);
      } else {
        assert.deepEqual(op.security, [{ basicAuth: [] }], `${method} ${path}`);
        assert.equal(op['x-premium-required'], true, `${method} ${path} should be marked Premium`);
      }
    }
  });

  test('offers form and JSON bodies for every POST and marks the /account alias deprecated', () => {
    for (const [method, path] of ENDPOINTS.filter(([method]) => method === 'post')) {
      assert.deepEqual(Object.keys(operation(live.doc, method, path).requestBody!.content).sort(), ['application/json', 'application/x-www-form-urlencoded']);
    }
    assert.equal(operation(live.doc, 'get', '/api/v0/account').deprecated, true);
    assert.equal(operation(live.doc, 'post', '/api/v0/account').deprecated, true);
    assert.notEqual(operation(live.doc, 'get', '/api/v0/user').deprecated, true);
  });

  test('takes If-None-Match on every GET with an ETag, for the 304', () => {
    for (const path of ['/api/v0/settings/timezones', '/api/v0/settings', '/api/v0/user', '/api/v0/account']) {
      assert.deepEqual(headerParameters(live.doc, 'get', path), [{ in: 'header', name: 'If-None-Match', required: false }], `GET ${path}`);
    }
  });

  test('takes If-Match and Idempotency-Key on POST /user and POST /settings', () => {
    for (const path of ['/api/v0/settings', '/api/v0/user', '/api/v0/account']) {
      assert.deepEqual(
        headerParameters(live.doc, 'post', path),
        [
          { in: 'header', name: 'If-Match', required: false },
          { in: 'header', name: 'Idempotency-Key', required: false },
        ],
        `POST ${path}`,
      );
    }
  });

  test('limits a display name to 1..100 code points, as the service counts it', () => {
    for (const path of ['/api/v0/user', '/api/v0/account']) {
      for (const [media, { schema }] of Object.entries(operation(live.doc, 'post', path).requestBody!.content)) {
        const name = schema.properties.name!;
        assert.equal(name.minLength, 1, `POST ${path} (${media}): name.minLength`);
        assert.equal(name.maxLength, DISPLAY_NAME_MAX_LENGTH, `POST ${path} (${media}): name.maxLength`);
        assert.match(name.description ?? '', /Unicode code points/, `POST ${path} (${media}): the description should say how length is counted`);
      }
    }
  });

  test('keeps the envelopes, each data object and each failure in components/schemas, and every answer refers to one', () => {
    const { schemas } = live.doc.components;
    for (const name of ['EmptyMeta', 'Hello', 'User', 'Settings', 'TimezonesMeta', 'HelloEnvelope', 'UserEnvelope', 'SettingsEnvelope', 'TimezonesEnvelope']) {
      assert.ok(schemas[name], `components/schemas has no ${name}; it has ${Object.keys(schemas).join(', ')}`);
    }
    assert.deepEqual(schemas.UserEnvelope.properties.data, { $ref: '#/components/schemas/User' });
    assert.deepEqual(schemas.UserEnvelope.properties.meta, { $ref: '#/components/schemas/EmptyMeta' });
    forEachResponse(live.doc, (where, status, response) => {
      for (const [media, { schema }] of Object.entries(response.content ?? {})) {
        assert.deepEqual(Object.keys(schema), ['$ref'], `${where} ${media}: the schema is inlined, not a $ref`);
        if (status !== '200') assert.equal(schema.$ref, `#/components/schemas/Failure${status}`, `${where}: the failure envelope of ${status}`);
        component(live.doc, schema, 'schemas');
      }
    });
  });

  test("enumerates each failure status's codes as docs/api.md's table does", () => {
    for (const [status, codes] of Object.entries(FAILURE_CODES)) {
      const schema = live.doc.components.schemas[`Failure${status}`];
      assert.ok(schema, `components/schemas has no Failure${status}`);
      assert.deepEqual(schema.properties.messages.items.properties.code.enum, [...codes], `Failure${status}'s codes`);
      assert.deepEqual(schema.properties.status.enum, [Number(status) >= 500 ? 'error' : 'fail']);
    }
  });

  test('lists every status each operation can answer', () => {
    for (const [method, path] of ENDPOINTS) {
      assert.deepEqual(Object.keys(operation(live.doc, method, path).responses), expectedStatuses(method, path), `the statuses of ${method.toUpperCase()} ${path}`);
    }
  });

  test('lists the headers each answer carries, each a $ref to components/headers', () => {
    const rateLimits = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'];
    forEachResponse(live.doc, (where, status, response, method, path) => {
      const headers = documentedHeaders(live.doc, response);
      const has = (name: string, why: string) => assert.ok(headers.has(name), `${where} should document ${name} (${why}); it lists ${[...headers.keys()].join(', ')}`);
      has('X-Request-Id', 'every answer');
      assert.ok(!headers.has('X-Environment'), `${where}: the live server sends no X-Environment`);
      if (status === '401') has('WWW-Authenticate', 'the Basic challenge');
      if (status === '405') has('Allow', 'the methods of the path');
      if (status === '429' || status === '503') has('Retry-After', 'when to retry');
      if (!BEFORE_ROUTE.has(status) && status !== '401') for (const name of rateLimits) has(name, 'the budget spent');
      if (path.endsWith('/timezones') && (status === '200' || status === '304')) has('ETag', 'the version of the list');
      if (!path.endsWith('/hello') && (status === '200' || status === '304')) has('ETag', 'the version of the answer');
      if (method === 'post' && !path.endsWith('/hello') && ['200', '400', '404', '412'].includes(status)) {
        has('Idempotent-Replayed', 'an answer an Idempotency-Key keeps is replayed with it');
      }
      if (path.endsWith('/timezones') && (status === '200' || status === '304')) has('Vary', 'a body in gzip or brotli when asked');
      if (path.endsWith('/timezones') && status === '200') has('Content-Encoding', 'a body in gzip or brotli when asked');
      if (path.endsWith('/account') && !BEFORE_ROUTE.has(status)) for (const name of ['Deprecation', 'Link']) has(name, 'the deprecated alias');
    });
    for (const name of ['X-Request-Id', 'WWW-Authenticate', 'Retry-After', 'ETag', 'Deprecation', 'Link', 'Allow']) {
      assert.equal(live.doc.components.headers[name]?.required, true, `${name} is always sent where it is listed`);
    }
    for (const name of rateLimits) assert.equal(live.doc.components.headers[name]?.required, false, `${name} is sent only when a budget was spent`);
  });

  test("the sandbox's document is the live one with X-Environment on every answer and itself as the only server", () => {
    forEachResponse(sandbox.doc, (where, _status, response) => {
      assert.deepEqual(response.headers?.['X-Environment'], { $ref: '#/components/headers/X-Environment' }, `${where} should document X-Environment`);
    });
    assert.equal(sandbox.doc.components.headers['X-Environment']?.required, true);
    const withoutEnvironment = structuredClone(sandbox.doc);
    forEachResponse(withoutEnvironment, (_where, _status, response) => delete response.headers?.['X-Environment']);
    delete withoutEnvironment.components.headers['X-Environment'];
    assert.deepEqual({ ...withoutEnvironment, servers: live.doc.servers }, live.doc);
  });
});

/** Fails unless the status is documented for the operation, the body matches its schema, and the headers its headers. */
function conforms(on: Target, method: string, path: string, result: CallResult, what: string): void {
  const op = operation(on.doc, method, path);
  const status = String(result.status);
  const documented = op.responses[status];
  assert.ok(documented !== undefined, `${on.name}, ${what}: ${result.status} is not documented for ${method.toUpperCase()} ${path}: ${result.text}`);
  const pointer = `${on.name}.json#/paths/${path.replaceAll('/', '~1')}/${method}/responses/${status}`;
  if (documented.content?.['application/json'] === undefined) {
    assert.equal(result.text, '', `${on.name}, ${what}: a ${status} documented without a body came with one`);
  } else {
    const validate = validator(on, `${pointer}/content/application~1json/schema`);
    assert.ok(
      validate(result.body),
      `${on.name}, ${what}: the ${status} body does not match the document: ${on.ajv.errorsText(validate.errors)}\n${result.text}`,
    );
  }
  const headers = documentedHeaders(on.doc, documented);
  const lower = new Map([...headers].map(([name, header]) => [name.toLowerCase(), { name, header }]));
  for (const [name, header] of headers) {
    if (header.required === true) {
      assert.ok(result.headers.has(name), `${on.name}, ${what}: the ${status} answer lacks ${name}, which the document says it always carries`);
    }
  }
  for (const [name, value] of result.headers) {
    const found = lower.get(name);
    if (found === undefined) {
      assert.ok(UNDOCUMENTED_HEADERS.has(name), `${on.name}, ${what}: the ${status} answer carries ${name}: ${value}, which the document does not list for it`);
      continue;
    }
    const validate = validator(on, `${on.name}.json#/components/headers/${found.name}/schema`);
    const parsed = found.header.schema.type === 'integer' && /^\d+$/.test(value) ? Number(value) : value;
    assert.ok(validate(parsed), `${on.name}, ${what}: ${found.name}: ${value} does not match the document: ${on.ajv.errorsText(validate.errors)}`);
  }
}

function validator(on: Target, pointer: string): ValidateFunction {
  let validate = on.validators.get(pointer);
  if (validate === undefined) {
    validate = on.ajv.getSchema(pointer);
    assert.ok(validate !== undefined, `${pointer} does not resolve`);
    on.validators.set(pointer, validate);
  }
  return validate;
}

/** The example body of an operation, from its documented examples; undefined when it takes none. */
function exampleOf(op: Operation): Record<string, string> | undefined {
  if (op.requestBody === undefined) return undefined;
  const properties = op.requestBody.content['application/x-www-form-urlencoded']!.schema.properties;
  const example = Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, property.examples?.[0] ?? '']));
  assert.ok(
    Object.values(example).every((value) => value !== ''),
    'an operation documents no example for its body',
  );
  return example;
}

describe('the running server', () => {
  test('answers every documented example as the document says, as form and as JSON, live and sandbox', async () => {
    let checked = 0;
    for (const on of [live, sandbox]) {
      for (const [method, path] of ENDPOINTS) {
        const example = exampleOf(operation(on.doc, method, path));
        const bodies: CallOptions[] = example === undefined ? [{}] : [{ form: example }, { json: example }];
        for (const body of bodies) {
          for (const auth of [on.premium, on.basic, undefined]) {
            const result = await call(method.toUpperCase(), `${on.server.url}${path}`, { ...body, ...(auth === undefined ? {} : { auth }) });
            conforms(on, method, path, result, `example ${JSON.stringify(body)} as ${auth?.username ?? 'nobody'}`);
            checked++;
          }
        }
      }
      const first = await call('GET', `${on.server.api}/settings/timezones`, { auth: on.premium });
      const etag = first.headers.get('etag')!;
      const notModified = await call('GET', `${on.server.api}/settings/timezones`, { auth: on.premium, headers: { 'if-none-match': etag } });
      assert.equal(notModified.status, 304);
      conforms(on, 'get', '/api/v0/settings/timezones', notModified, '304');
      checked++;
    }
    console.log(`openapi: ${checked} example calls conform to the documents, headers included`);
  });

  test('answers generated requests to every operation with documented statuses, bodies and headers', async () => {
    const value = fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom('Europe/Paris', 'europe/paris', '', ' ', 'x'.repeat(150), 'UTC'));
    const generated = fc.record({
      endpoint: fc.constantFrom(...ENDPOINTS),
      who: fc.constantFrom('alice', 'basic', 'nobody', 'wrong'),
      as: fc.constantFrom('form', 'json'),
      fields: fc.dictionary(fc.constantFrom('name', 'timezone', 'other'), value, { maxKeys: 3 }),
    });
    const samples = fc.sample(generated, { numRuns: 300, seed: 42 });
    for (const sample of samples) {
      const [method, path] = sample.endpoint as readonly [string, string];
      const auth =
        sample.who === 'alice' ? live.premium : sample.who === 'basic' ? live.basic : sample.who === 'wrong' ? { username: 'alice', key: live.basic.key } : undefined;
      const body: CallOptions = method === 'get' ? {} : sample.as === 'form' ? { form: sample.fields } : { json: sample.fields };
      const result = await call(method.toUpperCase(), `${live.server.url}${path}`, { ...body, ...(auth === undefined ? {} : { auth }) });
      conforms(live, method, path, result, `generated ${JSON.stringify(sample)}`);
    }
    console.log(`openapi: ${samples.length} generated calls conform to the document`);
  });

  test('answers a wrong method, a large body, a wrong media type and oversized headers as documented', async () => {
    const { url, api } = live.server;
    for (const [method, path] of [['get', '/api/v0/user'], ['post', '/api/v0/account'], ['get', '/api/v0/settings/timezones']] as const) {
      const result = await call('DELETE', `${url}${path}`, { auth: live.premium });
      assert.equal(result.status, 405);
      conforms(live, method, path, result, `DELETE ${path}`);
    }
    const large = await call('POST', `${api}/account`, { auth: live.premium, form: { name: 'a'.repeat(20_000) } });
    assert.equal(large.status, 413);
    conforms(live, 'post', '/api/v0/account', large, 'a 20 KB body');
    const text = await call('POST', `${api}/settings`, { auth: live.premium, body: 'timezone=UTC', headers: { 'content-type': 'text/plain' } });
    assert.equal(text.status, 415);
    conforms(live, 'post', '/api/v0/settings', text, 'a text/plain body');
    const oversized = await call('GET', `${api}/hello`, { headers: { 'x-big': 'a'.repeat(20_000) } });
    assert.equal(oversized.status, 431);
    conforms(live, 'get', '/api/v0/hello', oversized, '20 KB of headers');
  });

  test("answers 429 with Retry-After and the RateLimit headers once the sandbox's per-address budget is spent", async () => {
    let result: CallResult | undefined;
    for (let attempt = 0; attempt < 40 && result?.status !== 429; attempt++) {
      result = await call('GET', `${sandbox.server.api}/hello`);
      conforms(sandbox, 'get', '/api/v0/hello', result, `anonymous GET /hello #${attempt + 1}`);
    }
    assert.equal(result?.status, 429, 'the per-address budget of 30 should be spent within 40 calls');
    for (const name of ['retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) {
      assert.ok(result.headers.has(name), `the 429 should carry ${name}`);
    }
  });
});

test('an API route without a documented schema stops the app from starting', async () => {
  const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'silent' }, {});
  const store = new SqliteStore({ path: ':memory:', environment: 'live', synchronous: 'full', busyTimeoutMs: 1000 });
  const app = buildApp({ config, store, timezones: loadTimezoneCatalog(), redis: null, metrics: createMetrics() });
  app.register(
    async (v0) => {
      v0.get('/undocumented', { config: { access: 'public' } }, async () => ({}));
    },
    { prefix: config.apiPrefix },
  );
  await assert.rejects(async () => {
    await app.ready();
  }, /no summary and response schema/);
  await store.close();
});
