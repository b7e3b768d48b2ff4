// The OpenAPI document: valid OpenAPI 3.1, complete, generated from the route schemas, and true of the running server.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { loadTimezoneCatalog } from '../../src/domain/timezones.ts';
import { createMetrics } from '../../src/http/metrics.ts';
import { FAILURE_CODES } from '../../src/http/failure-codes.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { call, type CallOptions, type CallResult } from '../support/http.ts';
import { createAccount, createWorkspace, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';

type Operation = {
  summary?: string;
  deprecated?: boolean;
  security?: Record<string, string[]>[];
  'x-premium-required'?: boolean;
  requestBody?: { content: Record<string, { schema: { properties: Record<string, { examples?: string[] }> } }> };
  responses: Record<string, { content?: Record<string, { schema: object }> }>;
};
type Document = { openapi: string; paths: Record<string, Record<string, Operation>>; servers: { url: string }[]; components: any };

let workspace: Workspace;
let server: ServerProcess;
let alice: Account;
let basicAccount: Account;
let doc: Document;

before(async () => {
  workspace = createWorkspace({ LOG_LEVEL: 'warn' });
  alice = await createAccount(workspace, 'alice', { name: 'Alice' });
  basicAccount = await createAccount(workspace, 'basic', { premium: false });
  server = await startServer(workspace);
  const response = await call('GET', `${server.api}/openapi.json`);
  assert.equal(response.status, 200);
  doc = response.body;
});

after(async () => {
  await server.stop();
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

function operation(method: string, path: string): Operation {
  const found = doc.paths[path]?.[method];
  assert.ok(found !== undefined, `the document has no ${method.toUpperCase()} ${path}`);
  return found;
}

describe('the document', () => {
  test('is valid OpenAPI 3.1', async () => {
    assert.equal(doc.openapi, '3.1.0');
    const result = await new Validator().validate(doc as never);
    assert.equal(result.valid, true, `the validator says: ${JSON.stringify(result.errors)}`);
  });

  test('has exactly the API operations (HEAD aside), each with a summary', () => {
    const listed = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods)
        .filter((method) => method !== 'head')
        .map((method) => `${method} ${path}`),
    );
    assert.deepEqual(listed.sort(), ENDPOINTS.map(([method, path]) => `${method} ${path}`).sort());
    for (const [method, path] of ENDPOINTS) assert.ok(operation(method, path).summary, `${method} ${path} has no summary`);
  });

  test('declares Basic security; private operations require it and are marked Premium, /hello takes it optionally', () => {
    assert.deepEqual(doc.components.securitySchemes.basicAuth, {
      type: 'http',
      scheme: 'basic',
      description: doc.components.securitySchemes.basicAuth.description,
    });
    for (const [method, path] of ENDPOINTS) {
      const op = operation(method, path);
      if (path === '/api/v0/hello') {
        assert.deepEqual(op.security, [{}, { basicAuth: [] }]);
        assert.equal(op['x-premium-required'], undefined);
      } else {
        assert.deepEqual(op.security, [{ basicAuth: [] }], `${method} ${path}`);
        assert.equal(op['x-premium-required'], true, `${method} ${path} should be marked Premium`);
        assert.ok(op.responses['403'], `${method} ${path} should document 403 premium_required`);
      }
    }
  });

  test('offers form and JSON bodies for every POST, marks the /account alias deprecated, and lists the sandbox server', () => {
    for (const [method, path] of ENDPOINTS.filter(([method]) => method === 'post')) {
      assert.deepEqual(Object.keys(operation(method, path).requestBody!.content).sort(), ['application/json', 'application/x-www-form-urlencoded']);
    }
    assert.equal(operation('get', '/api/v0/account').deprecated, true);
    assert.equal(operation('post', '/api/v0/account').deprecated, true);
    assert.notEqual(operation('get', '/api/v0/user').deprecated, true);
    assert.ok(doc.servers.some((entry) => entry.url === 'http://localhost:8081'), 'the sandbox should be a second server');
  });

  test("enumerates each failure status's codes as docs/api.md's table does", () => {
    const schema = operation('post', '/api/v0/settings').responses['400']!.content!['application/json']!.schema as any;
    assert.deepEqual(schema.properties.messages.items.properties.code.enum, [...FAILURE_CODES[400]]);
    assert.ok(schema.properties.messages.items.properties.code.enum.includes('invalid_timezone'));
  });
});

describe('the running server', () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const validators = new Map<string, ReturnType<typeof ajv.compile>>();

  /** Fails unless the status is documented for the operation and the body matches its schema. */
  function conforms(method: string, path: string, result: CallResult, what: string): void {
    const op = operation(method, path);
    const documented = op.responses[String(result.status)];
    assert.ok(documented !== undefined, `${what}: ${result.status} is not documented for ${method.toUpperCase()} ${path}: ${result.text}`);
    const schema = documented.content?.['application/json']?.schema;
    if (schema === undefined) {
      assert.equal(result.text, '', `${what}: a ${result.status} documented without a body came with one`);
      return;
    }
    const key = `${method} ${path} ${result.status}`;
    if (!validators.has(key)) validators.set(key, ajv.compile(schema));
    const validate = validators.get(key)!;
    assert.ok(validate(result.body), `${what}: the ${result.status} body does not match the document: ${ajv.errorsText(validate.errors)}\n${result.text}`);
  }

  test('answers every documented example as the document says, as form and as JSON', async () => {
    let checked = 0;
    for (const [method, path] of ENDPOINTS) {
      const op = operation(method, path);
      const bodies: CallOptions[] = [{}];
      if (op.requestBody !== undefined) {
        const properties = op.requestBody.content['application/x-www-form-urlencoded']!.schema.properties;
        const example = Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, property.examples?.[0] ?? '']));
        assert.ok(Object.values(example).every((value) => value !== ''), `${method} ${path} documents no example for its body`);
        bodies.splice(0, 1, { form: example }, { json: example });
      }
      for (const body of bodies) {
        for (const auth of [alice, basicAccount, undefined]) {
          const result = await call(method.toUpperCase(), `${server.url}${path}`, { ...body, ...(auth === undefined ? {} : { auth }) });
          conforms(method, path, result, `example ${JSON.stringify(body)} as ${auth?.username ?? 'nobody'}`);
          checked++;
        }
      }
    }
    const notModified = await call('GET', `${server.api}/settings/timezones`, { auth: alice });
    const etag = notModified.headers.get('etag')!;
    conforms('get', '/api/v0/settings/timezones', await call('GET', `${server.api}/settings/timezones`, { auth: alice, headers: { 'if-none-match': etag } }), '304');
    console.log(`openapi: ${checked + 1} example calls conform to the document`);
  });

  test('answers generated requests to every operation with documented statuses and bodies', async () => {
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
        sample.who === 'alice' ? alice : sample.who === 'basic' ? basicAccount : sample.who === 'wrong' ? { username: 'alice', key: basicAccount.key } : undefined;
      const body: CallOptions = method === 'get' ? {} : sample.as === 'form' ? { form: sample.fields } : { json: sample.fields };
      const result = await call(method.toUpperCase(), `${server.url}${path}`, { ...body, ...(auth === undefined ? {} : { auth }) });
      conforms(method, path, result, `generated ${JSON.stringify(sample)}`);
    }
    console.log(`openapi: ${samples.length} generated calls conform to the document`);
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
