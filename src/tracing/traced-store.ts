// The store with every call a span `store.<method>`, a child of the span active where it is called (the request's): only
// with tracing on (server.ts). Every method forwards to the store it wraps, with the same arguments and the same answer.
import { SpanKind, trace, type Tracer } from '@opentelemetry/api';
import type { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ATTR_DB_OPERATION_NAME, ATTR_DB_SYSTEM_NAME } from '@opentelemetry/semantic-conventions';
import type { Store } from '../store/store.ts';
import { defineForwarders, type StoreMethod } from '../store/store-methods.ts';
import { failed } from './span-failure.ts';

export interface StoreTracer {
  readonly tracer: Tracer;
  readonly contexts: AsyncLocalStorageContextManager;
}

/** The names the database conventions give our engines. */
const DB_SYSTEMS: Readonly<Record<string, string>> = { sqlite: 'sqlite', postgres: 'postgresql' };

type Method = StoreMethod;

// Every Store method is an own property made in the constructor (store-methods.ts): declared here for the type checker.
export interface TracedStore extends Store {}

export class TracedStore {
  readonly engine: string;
  readonly environment: Store['environment'];
  readonly #inner: Store;
  readonly #tracer: StoreTracer;
  readonly #system: string;

  constructor(inner: Store, tracer: StoreTracer) {
    this.#inner = inner;
    this.#tracer = tracer;
    this.engine = inner.engine;
    this.environment = inner.environment;
    this.#system = DB_SYSTEMS[inner.engine] ?? inner.engine;
    defineForwarders(this, inner, (method) => (...args: never[]) => this.#call(method, args as Parameters<Store[typeof method]>));
  }

  /** Calls the inner store's method in a span; an answer given at once (findCredential's) is still given at once. */
  #call<M extends Method>(method: M, args: Parameters<Store[M]>): ReturnType<Store[M]> {
    const { tracer, contexts } = this.#tracer;
    const parent = contexts.active();
    // `db.system` is the older name of `db.system.name`: tracing back ends still key on either.
    const attributes = { [ATTR_DB_SYSTEM_NAME]: this.#system, 'db.system': this.#system, [ATTR_DB_OPERATION_NAME]: method };
    const span = tracer.startSpan(`store.${method}`, { kind: SpanKind.CLIENT, attributes }, parent);
    let answer: ReturnType<Store[M]>;
    try {
      answer = contexts.with(trace.setSpan(parent, span), () => (this.#inner[method] as (...values: unknown[]) => ReturnType<Store[M]>)(...args));
    } catch (error) {
      failed(span, error);
      span.end();
      throw error;
    }
    if (!(answer instanceof Promise)) {
      span.end();
      return answer;
    }
    return answer.then(
      (value: unknown) => {
        span.end();
        return value;
      },
      (error: unknown) => {
        failed(span, error);
        span.end();
        throw error;
      },
    ) as ReturnType<Store[M]>;
  }
}
