// The limits the OpenAPI documents state are the server's: a value at a documented limit is taken, one past it is refused with
// the code the operation documents for it (issue 36). Read from the served documents, checked against real answers.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { basic, call, type CallResult } from '../support/http.ts';
import { createAccount } from '../support/server-process.ts';
import { bearer, expectData, expectFailure, startAdminServer, type AdminServer } from './admin/admin-support.ts';

type Schema = { type?: string | string[]; maxLength?: number; minimum?: number; maximum?: number; pattern?: string; format?: string };
type Operation = {
  parameters?: { name: string; in: string; schema: Schema }[];
  requestBody?: { required: boolean; content: Record<string, { schema: { properties: Record<string, Schema> } }> };
  responses: Record<string, { $ref?: string; headers?: Record<string, { $ref: string }>; content?: Record<string, { schema: { $ref: string } }> }>;
};
type Document = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, any>; headers: Record<string, { required: boolean }> } };

let subject: AdminServer;
let publicDocument: Document;
let adminDocument: Document;

before(async () => {
  subject = await startAdminServer(null);
  publicDocument = (await call('GET', `${subject.server.api}/openapi.json`)).body;
  adminDocument = (await call('GET', `${subject.admin}/openapi.json`)).body;
});

after(async () => subject?.stop());

function operation(document: Document, method: string, path: string): Operation {
  const found = document.paths[path]?.[method];
  assert.ok(found, `${method.toUpperCase()} ${path} is not in the document`);
  return found;
}

function bodyField(document: Document, method: string, path: string, field: string): Schema {
  const schema = operation(document, method, path).requestBody?.content['application/json']?.schema.properties[field];
  assert.ok(schema, `${method.toUpperCase()} ${path} documents no body field ${field}`);
  return schema;
}

function parameter(document: Document, method: string, path: string, name: string): Schema {
  const found = operation(document, method, path).parameters?.find((each) => each.name === name);
  assert.ok(found, `${method.toUpperCase()} ${path} documents no parameter ${name}`);
  return found.schema;
}

/** The 400 codes the operation's document lists, so that a refusal is one the reader was told about. */
function documented400Codes(document: Document, method: string, path: string): string[] {
  const response = operation(document, method, path).responses['400']!;
  const id = (response.content?.['application/json']?.schema.$ref ?? response.$ref ?? '').split('/').pop()!;
  return document.components.schemas[id].properties.messages.items.properties.code.enum;
}

function refusedAsDocumented(result: CallResult, document: Document, method: string, path: string, code: string): void {
  expectFailure(result, 400, code);
  assert.ok(documented400Codes(document, method, path).includes(code), `${code} is not among the 400 codes ${method.toUpperCase()} ${path} documents`);
}

test("POST /hello's name: MAX_PARAMETER_LENGTH (1,000 by default) is documented; 1,000 characters are echoed, 1,001 are 400 parameter_too_long", async () => {
  const { maxLength } = bodyField(publicDocument, 'post', '/api/v0/hello', 'name');
  assert.equal(maxLength, 1000, 'the issue: the server answers 400 parameter_too_long past 1,000 characters');
  const at = await call('POST', `${subject.server.api}/hello`, { form: { name: 'é'.repeat(maxLength) } });
  assert.equal(at.status, 200);
  assert.equal(at.body.data.name, 'é'.repeat(maxLength));
  refusedAsDocumented(await call('POST', `${subject.server.api}/hello`, { form: { name: 'é'.repeat(maxLength + 1) } }), publicDocument, 'post', '/api/v0/hello', 'parameter_too_long');
});

test('admin usernames, names and key labels: at the documented maxLength taken, one past it refused with the rule’s own code', async () => {
  const username = bodyField(adminDocument, 'post', '/admin/v0/accounts', 'username');
  assert.equal(username.maxLength, 64);
  const shape = new RegExp(username.pattern!);
  const longest = 'u'.repeat(username.maxLength!);
  assert.match(longest, shape);
  expectData(await subject.call('POST', '/accounts', { form: { username: longest } }), 201);
  refusedAsDocumented(await subject.call('POST', '/accounts', { form: { username: `${longest}u` } }), adminDocument, 'post', '/admin/v0/accounts', 'invalid_username');
  assert.doesNotMatch('has space', shape);
  refusedAsDocumented(await subject.call('POST', '/accounts', { form: { username: 'has space' } }), adminDocument, 'post', '/admin/v0/accounts', 'invalid_username');

  const name = bodyField(adminDocument, 'post', '/admin/v0/accounts', 'name');
  assert.equal(name.maxLength, 100);
  expectData(await subject.call('POST', '/accounts', { form: { username: 'named', name: 'n'.repeat(name.maxLength!) } }), 201);
  refusedAsDocumented(await subject.call('POST', '/accounts', { form: { username: 'named2', name: 'n'.repeat(name.maxLength! + 1) } }), adminDocument, 'post', '/admin/v0/accounts', 'invalid_name');

  const label = bodyField(adminDocument, 'post', '/admin/v0/accounts/{username}/keys', 'label');
  assert.equal(label.maxLength, 100);
  expectData(await subject.call('POST', '/accounts/named/keys', { form: { label: 'l'.repeat(label.maxLength!) } }), 201);
  refusedAsDocumented(await subject.call('POST', '/accounts/named/keys', { form: { label: 'l'.repeat(label.maxLength! + 1) } }), adminDocument, 'post', '/admin/v0/accounts/{username}/keys', 'invalid_label');
});

test('?limit is documented as an integer from 1 to 100; 100 is taken, and 101, 0 and abc keep their 400 invalid_limit', async () => {
  const limit = parameter(adminDocument, 'get', '/admin/v0/accounts', 'limit');
  assert.deepEqual([limit.type, limit.format, limit.minimum, limit.maximum], ['integer', 'int32', 1, 100]);
  expectData(await subject.call('GET', `/accounts?limit=${limit.maximum}`));
  expectData(await subject.call('GET', `/accounts?limit=${limit.minimum}`));
  for (const bad of [String(limit.maximum! + 1), String(limit.minimum! - 1), 'abc', '5.5']) {
    refusedAsDocumented(await subject.call('GET', `/accounts?limit=${bad}`), adminDocument, 'get', '/admin/v0/accounts', 'invalid_limit');
  }
});

test('roll-key and redeliver take no body, and their documents say so (requestBody not required)', async () => {
  assert.equal(operation(adminDocument, 'post', '/admin/v0/keys/{key_id}/roll').requestBody?.required, false);
  assert.equal(operation(adminDocument, 'post', '/admin/v0/webhook-events/{event_id}/redeliver').requestBody?.required, false);
  assert.equal(operation(adminDocument, 'post', '/admin/v0/accounts').requestBody?.required, true, 'a body with a required field stays required');
  const issued = expectData(await subject.call('POST', '/accounts/named/keys', { form: {} }), 201);
  const rolled = expectData(await subject.call('POST', `/keys/${issued.key_id}/roll`));
  assert.equal(rolled.old.key_id, issued.key_id);
  expectFailure(await subject.call('POST', '/webhook-events/evt_none/redeliver'), 404, 'webhook_event_not_found');
});

test('the admin document declares the headers its answers carry: X-Request-Id and RateLimit-* on a page, WWW-Authenticate on a 401, Retry-After on a 429', async () => {
  const listing = operation(adminDocument, 'get', '/admin/v0/accounts');
  const declared = (status: string) => Object.keys(listing.responses[status]?.headers ?? {});
  const page = await subject.call('GET', '/accounts');
  for (const header of ['X-Request-Id', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']) {
    assert.ok(declared('200').includes(header), `200 does not declare ${header}`);
    assert.ok(page.headers.get(header) !== null, `the 200 carries no ${header}`);
  }
  const refused = await call('GET', `${subject.admin}/accounts`, { auth: bearer('aapi_admin_wrong') });
  assert.equal(refused.status, 401);
  assert.ok(declared('401').includes('WWW-Authenticate'));
  assert.match(refused.headers.get('www-authenticate') ?? '', /^Bearer realm="/);
  assert.ok(declared('429').includes('Retry-After'));
  for (const name of ['X-Request-Id', 'WWW-Authenticate', 'Retry-After']) assert.equal(adminDocument.components.headers[name]?.required, true, name);
  // And the public port's, which this test does not change, still answers a 401 with its Basic challenge.
  const alice = await createAccount(subject.workspace, 'alice');
  assert.match((await call('GET', `${subject.server.api}/user`, { auth: basic('alice', `${alice.key}x`) })).headers.get('www-authenticate') ?? '', /^Basic realm="/);
});
