// Protects the store's spans: every call a `store.<method>` span under the active one, the same answers, synchronous or not.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ROOT_CONTEXT, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { loadConfig } from '../../../src/config.ts';
import { DomainError } from '../../../src/domain/errors.ts';
import { openStore } from '../../../src/store/open-store.ts';
import type { Credential, Store } from '../../../src/store/store.ts';
import { TracedStore } from '../../../src/tracing/traced-store.ts';

function tracedOver(inner: Store) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('test');
  const contexts = new AsyncLocalStorageContextManager().enable();
  return { store: new TracedStore(inner, { tracer, contexts }), exporter, tracer, contexts };
}

test('a store call is a span named for its method, a child of the active span, with the database named', async () => {
  const config = loadConfig({ DATABASE_URL: 'sqlite::memory:' });
  const { store, exporter, tracer, contexts } = tracedOver(openStore(config));
  await store.migrate();
  const request = tracer.startSpan('request');
  const count = await contexts.with(trace.setSpan(ROOT_CONTEXT, request), () => store.countAccounts());
  assert.equal(count, 0);
  const span = exporter.getFinishedSpans().find((each) => each.name === 'store.countAccounts');
  assert.ok(span !== undefined, `no store.countAccounts span among ${exporter.getFinishedSpans().map((each) => each.name).join(', ')}`);
  assert.equal(span.parentSpanContext?.spanId, request.spanContext().spanId, 'the store span is not a child of the active span');
  assert.equal(span.attributes['db.system.name'], 'sqlite');
  assert.equal(span.attributes['db.operation.name'], 'countAccounts');
  await store.close();
});

test('an answer given at once (findCredential from the cache) is still given at once, and still a span', () => {
  const credential = { keyId: 'k' } as Credential;
  const inner = { engine: 'sqlite', environment: 'live', findCredential: () => credential } as unknown as Store;
  const { store, exporter } = tracedOver(inner);
  const answer = store.findCredential('k');
  assert.equal(answer, credential, 'the cached credential came back wrapped (a promise?) instead of as it was');
  assert.deepEqual(exporter.getFinishedSpans().map((span) => span.name), ['store.findCredential']);
});

test('a failing call rejects with the same error, and its span says it failed and why', async () => {
  const failure = new DomainError('not_found', 'account_not_found', 'No such account.');
  const inner = { engine: 'postgres', environment: 'live', findAccount: () => Promise.reject(failure) } as unknown as Store;
  const { store, exporter } = tracedOver(inner);
  await assert.rejects(store.findAccount('nobody'), (error) => error === failure);
  const [span] = exporter.getFinishedSpans();
  assert.equal(span?.status.code, SpanStatusCode.ERROR);
  assert.equal(span?.attributes['error.type'], 'account_not_found');
  assert.equal(span?.attributes['db.system.name'], 'postgresql');
});

test('a method an engine gains is traced without an edit of the traced store', async () => {
  const inner = { engine: 'sqlite', environment: 'live', brandNewMethod: async (value: number) => value + 1 } as unknown as Store;
  const { store, exporter } = tracedOver(inner);
  assert.equal(await (store as unknown as { brandNewMethod(value: number): Promise<number> }).brandNewMethod(1), 2);
  assert.deepEqual(exporter.getFinishedSpans().map((span) => span.name), ['store.brandNewMethod']);
});
