// Protects issue 15's traces: with OTEL_EXPORTER_OTLP_ENDPOINT set, requests and store calls are spans sent over OTLP/HTTP,
// continuing the caller's traceparent, and the request's log line carries its trace id.
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { HANG_MS } from '../support/eventually.ts';
import { basic, call } from '../support/http.ts';
import { createAccount, createWorkspace, startServer, type Account, type ServerProcess, type Workspace } from '../support/server-process.ts';
import { linesOfRequest } from '../support/signals.ts';
import { createTestDatabase, postgresSkipReason, type TestDatabase } from '../support/postgres.ts';
import { requiring } from '../support/requiring.ts';

/** A span as the OTLP/HTTP JSON encoding sends it (ids in hex), with its resource's service name. */
interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind: number;
  readonly attributes: Record<string, unknown>;
  readonly status?: { code?: number };
  readonly service: unknown;
}

const {
  describe: describePostgres,
  test: testPostgres,
  before: beforePostgres,
  after: afterPostgres,
} = requiring(await postgresSkipReason());

const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CLIENT = 3;

type Attribute = { key: string; value: Record<string, unknown> };
const attributesOf = (list: Attribute[] = []) => Object.fromEntries(list.map(({ key, value }) => [key, Object.values(value)[0]]));

/** A stand-in collector: takes POST /v1/traces (JSON) and keeps every span. */
async function startReceiver(): Promise<{ server: Server; url: string; spans: ReceivedSpan[]; paths: string[] }> {
  const spans: ReceivedSpan[] = [];
  const paths: string[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      paths.push(`${request.method} ${request.url} ${request.headers['content-type']}`);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: { resource: { attributes: Attribute[] }; scopeSpans: { spans: (Omit<ReceivedSpan, 'attributes' | 'service'> & { attributes: Attribute[] })[] }[] }[];
      };
      for (const resourceSpans of body.resourceSpans) {
        const service = attributesOf(resourceSpans.resource.attributes)['service.name'];
        for (const scope of resourceSpans.scopeSpans) {
          for (const span of scope.spans) spans.push({ ...span, attributes: attributesOf(span.attributes), service });
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, paths };
}

let receiver: Awaited<ReturnType<typeof startReceiver>>;
let workspace: Workspace;
let server: ServerProcess;
let alice: Account;

before(async () => {
  receiver = await startReceiver();
  // A short batch delay (read by the SDK itself) so spans arrive while the test waits, not only at shutdown.
  workspace = createWorkspace({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'account-api-test', OTEL_BSP_SCHEDULE_DELAY: '50' });
  alice = await createAccount(workspace, 'alice');
  server = await startServer(workspace);
});

after(async () => {
  await server.stop();
  workspace.cleanup();
  receiver.server.close();
});

/** The spans of one trace, waiting until `done` says they are all there (HANG_MS at most: a hang detector, not a timing check). */
async function spansOf(traceId: string, done: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]> {
  const deadline = Date.now() + HANG_MS;
  for (;;) {
    const spans = receiver.spans.filter((span) => span.traceId === traceId);
    if (done(spans)) return spans;
    if (Date.now() > deadline) {
      assert.fail(`the spans of trace ${traceId} did not all arrive; got ${JSON.stringify(spans, null, 1)}\nreceived: ${receiver.paths.join(', ')}`);
    }
    await sleep(50);
  }
}

function randomHex(bytes: number): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('hex');
}

test("a request continues the caller's traceparent: a server span, its store calls as children, its trace id in the log", async () => {
  const traceId = randomHex(16);
  const callerSpanId = randomHex(8);
  const requestId = 'traced-get-user';
  const result = await call('GET', `${server.api}/user`, {
    auth: alice,
    headers: { traceparent: `00-${traceId}-${callerSpanId}-01`, 'x-request-id': requestId },
  });
  assert.equal(result.status, 200, result.text);
  assert.equal(result.headers.get('traceparent'), null, 'the answer should not echo trace context');

  const spans = await spansOf(traceId, (found) => found.some((span) => span.kind === SPAN_KIND_SERVER) && found.some((span) => span.name === 'store.findCredential'));
  const request = spans.find((span) => span.kind === SPAN_KIND_SERVER)!;
  assert.equal(request.parentSpanId, callerSpanId, "the server span is not a child of the caller's span");
  assert.equal(request.name, 'GET /api/v0/user');
  assert.equal(request.service, 'account-api-test', 'OTEL_SERVICE_NAME was not the service name');
  assert.deepEqual(
    { route: request.attributes['http.route'], method: request.attributes['http.request.method'], status: request.attributes['http.response.status_code'] },
    { route: '/api/v0/user', method: 'GET', status: 200 },
  );
  const lookup = spans.find((span) => span.name === 'store.findCredential')!;
  assert.equal(lookup.parentSpanId, request.spanId, "the credential lookup is not a child of the request's span");
  assert.equal(lookup.kind, SPAN_KIND_CLIENT);
  assert.equal(lookup.attributes['db.system.name'], 'sqlite');

  const line = (await linesOfRequest(server, requestId)).find((each) => each.msg === 'request completed');
  assert.ok(line !== undefined, `no 'request completed' line for ${requestId}`);
  assert.equal(line.trace_id, traceId, "the request's log line does not carry its trace id");
  assert.equal(line.span_id, request.spanId, "the request's log line does not carry its span id");
});

/** POST with the body sent a moment after the headers: it is read in the socket's callbacks, after onRequest has returned. */
function postLate(url: string, account: Account, body: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  return new Promise((done, fail) => {
    const outgoing = httpRequest(url, {
      method: 'POST',
      headers: {
        ...headers,
        authorization: basic(account.username, account.key),
        'content-type': 'application/x-www-form-urlencoded',
        'content-length': String(Buffer.byteLength(body)),
      },
    });
    outgoing.on('error', fail);
    outgoing.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => done({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    outgoing.flushHeaders();
    setTimeout(() => outgoing.end(body), 100);
  });
}

test("a handler that reads a body still runs inside the request's span", async () => {
  const traceId = randomHex(16);
  const result = await postLate(`${server.api}/settings`, alice, 'timezone=Europe%2FParis', { traceparent: `00-${traceId}-${randomHex(8)}-01` });
  assert.equal(result.status, 200, result.text);
  const spans = await spansOf(traceId, (found) => found.some((span) => span.kind === SPAN_KIND_SERVER) && found.some((span) => span.name === 'store.updateTimezone'));
  const request = spans.find((span) => span.kind === SPAN_KIND_SERVER)!;
  assert.equal(request.attributes['http.route'], '/api/v0/settings');
  const update = spans.find((span) => span.name === 'store.updateTimezone')!;
  assert.equal(update.parentSpanId, request.spanId, "the handler's store call is not a child of the request's span");
});

test('with a malformed traceparent a request starts a trace of its own; a refused one is a span too', async () => {
  const before = new Set(receiver.spans.map((span) => span.traceId));
  const malformed = `00-${'0'.repeat(32)}-${randomHex(8)}-01`; // an all-zero trace id is invalid
  const result = await call('GET', `${server.api}/user`, { headers: { 'x-request-id': 'traced-401', traceparent: malformed } });
  assert.equal(result.status, 401);
  const line = (await linesOfRequest(server, 'traced-401')).find((each) => each.msg === 'request completed');
  const traceId = String(line?.trace_id);
  assert.match(traceId, /^[0-9a-f]{32}$/, 'the log line of an untraced caller carries no trace id');
  assert.ok(!before.has(traceId), 'the trace id was not new');
  const [request] = await spansOf(traceId, (found) => found.some((span) => span.kind === SPAN_KIND_SERVER));
  assert.equal(request!.parentSpanId ?? '', '', 'a root span has no parent');
  assert.equal(request!.attributes['http.response.status_code'], 401);
  assert.notEqual(request!.status?.code, 2, 'a 401 is the caller\'s mistake, not a failed span');
});

test('spans still waiting for their batch are exported when the server stops, and it still exits 0', async () => {
  const patient = createWorkspace({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '600000' });
  try {
    const stopping = await startServer(patient);
    const traceId = randomHex(16);
    const result = await call('GET', `${stopping.api}/hello`, { headers: { traceparent: `00-${traceId}-${randomHex(8)}-01` } });
    assert.equal(result.status, 200, result.text);
    await sleep(200);
    assert.equal(receiver.spans.filter((span) => span.traceId === traceId).length, 0, 'the span was exported before its batch was due');
    assert.equal(await stopping.stop(), 0, `the server did not stop cleanly:\n${stopping.output.join('\n')}`);
    const [request] = await spansOf(traceId, (found) => found.length > 0);
    assert.equal(request!.name, 'GET /api/v0/hello');
  } finally {
    patient.cleanup();
  }
});

// @opentelemetry/api alone is always loaded: prom-client requires it (for exemplars) whatever we do. It holds no SDK.
test('without OTEL_EXPORTER_OTLP_ENDPOINT, serve loads neither the OpenTelemetry SDK nor our tracing modules', async () => {
  const untraced = createWorkspace();
  try {
    // Preloaded by NODE_OPTIONS: notes every module the process resolves, and prints the OpenTelemetry ones as it exits.
    const watcher = join(untraced.dir, 'watch-modules.mjs');
    writeFileSync(
      watcher,
      `import { registerHooks } from 'node:module';
const seen = new Set();
registerHooks({ resolve(specifier, context, next) { if (/@opentelemetry\\/(?!api$)|\\/tracing\\/(otel-tracing|request-spans|traced-store)/.test(specifier)) seen.add(specifier); return next(specifier, context); } });
process.on('exit', () => process.stderr.write('opentelemetry modules: ' + JSON.stringify([...seen]) + '\\n'));
`,
    );
    const plain = await startServer(untraced, [], { NODE_OPTIONS: `--import=${watcher}` });
    const result = await call('GET', `${plain.api}/hello`, { headers: { traceparent: `00-${randomHex(16)}-${randomHex(8)}-01` } });
    assert.equal(result.status, 200, result.text);
    assert.equal(await plain.stop(), 0);
    const report = plain.output.find((line) => line.startsWith('opentelemetry modules: '));
    assert.ok(report !== undefined, `the module watcher did not report:\n${plain.output.join('\n')}`);
    assert.equal(report, 'opentelemetry modules: []', 'an untraced server loaded the OpenTelemetry SDK or our tracing step');
  } finally {
    untraced.cleanup();
  }
});

describePostgres('over PostgreSQL', () => {
  let database: TestDatabase;
  let pgWorkspace: Workspace;
  let pgServer: ServerProcess;
  let bob: Account;

  beforePostgres(async () => {
    database = await createTestDatabase();
    pgWorkspace = createWorkspace({ DATABASE_URL: database.url, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50' });
    bob = await createAccount(pgWorkspace, 'bob');
    pgServer = await startServer(pgWorkspace);
  });

  afterPostgres(async () => {
    await pgServer?.stop();
    pgWorkspace?.cleanup();
    await database?.drop();
  });

  testPostgres("store calls over the network are children of the request's span too, named for postgresql", async () => {
    const traceId = randomHex(16);
    const callerSpanId = randomHex(8);
    const result = await call('POST', `${pgServer.api}/settings`, {
      auth: bob,
      form: { timezone: 'Europe/Paris' },
      headers: { traceparent: `00-${traceId}-${callerSpanId}-01` },
    });
    assert.equal(result.status, 200, result.text);
    const spans = await spansOf(
      traceId,
      (found) => found.some((span) => span.kind === SPAN_KIND_SERVER) && found.some((span) => span.name === 'store.updateTimezone'),
    );
    const request = spans.find((span) => span.kind === SPAN_KIND_SERVER)!;
    assert.equal(request.parentSpanId, callerSpanId, "the server span is not a child of the caller's span");
    for (const name of ['store.findCredential', 'store.updateTimezone']) {
      const span = spans.find((each) => each.name === name);
      assert.ok(span !== undefined, `no ${name} span: ${spans.map((each) => each.name).join(', ')}`);
      assert.equal(span.parentSpanId, request.spanId, `${name} is not a child of the request's span`);
      assert.equal(span.attributes['db.system.name'], 'postgresql');
    }
  });
});
