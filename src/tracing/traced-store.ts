// The store with every call a span `store.<method>`, a child of the span active where it is called (the request's): only
// with tracing on (server.ts). Every method forwards to the store it wraps, with the same arguments and the same answer.
import { SpanKind, trace, type Tracer } from '@opentelemetry/api';
import type { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ATTR_DB_OPERATION_NAME, ATTR_DB_SYSTEM_NAME } from '@opentelemetry/semantic-conventions';
import type { Store } from '../store/store.ts';
import { failed } from './span-failure.ts';

export interface StoreTracer {
  readonly tracer: Tracer;
  readonly contexts: AsyncLocalStorageContextManager;
}

/** The names the database conventions give our engines. */
const DB_SYSTEMS: Readonly<Record<string, string>> = { sqlite: 'sqlite', postgres: 'postgresql' };

type Method = Exclude<keyof Store, 'engine' | 'environment'>;

export class TracedStore implements Store {
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

  migrate(...args: Parameters<Store['migrate']>) { return this.#call('migrate', args); }
  checkSchema(...args: Parameters<Store['checkSchema']>) { return this.#call('checkSchema', args); }
  createAccount(...args: Parameters<Store['createAccount']>) { return this.#call('createAccount', args); }
  createAccountWithKey(...args: Parameters<Store['createAccountWithKey']>) { return this.#call('createAccountWithKey', args); }
  findAccount(...args: Parameters<Store['findAccount']>) { return this.#call('findAccount', args); }
  listAccounts(...args: Parameters<Store['listAccounts']>) { return this.#call('listAccounts', args); }
  countAccounts(...args: Parameters<Store['countAccounts']>) { return this.#call('countAccounts', args); }
  setPremium(...args: Parameters<Store['setPremium']>) { return this.#call('setPremium', args); }
  updatePremium(...args: Parameters<Store['updatePremium']>) { return this.#call('updatePremium', args); }
  deleteAccount(...args: Parameters<Store['deleteAccount']>) { return this.#call('deleteAccount', args); }
  updateName(...args: Parameters<Store['updateName']>) { return this.#call('updateName', args); }
  updateTimezone(...args: Parameters<Store['updateTimezone']>) { return this.#call('updateTimezone', args); }
  createKey(...args: Parameters<Store['createKey']>) { return this.#call('createKey', args); }
  rollKey(...args: Parameters<Store['rollKey']>) { return this.#call('rollKey', args); }
  listKeys(...args: Parameters<Store['listKeys']>) { return this.#call('listKeys', args); }
  revokeKey(...args: Parameters<Store['revokeKey']>) { return this.#call('revokeKey', args); }
  findCredential(...args: Parameters<Store['findCredential']>) { return this.#call('findCredential', args); }
  recordAudit(...args: Parameters<Store['recordAudit']>) { return this.#call('recordAudit', args); }
  listAudit(...args: Parameters<Store['listAudit']>) { return this.#call('listAudit', args); }
  pruneAudit(...args: Parameters<Store['pruneAudit']>) { return this.#call('pruneAudit', args); }
  touchKey(...args: Parameters<Store['touchKey']>) { return this.#call('touchKey', args); }
  claimIdempotencyKey(...args: Parameters<Store['claimIdempotencyKey']>) { return this.#call('claimIdempotencyKey', args); }
  completeIdempotencyKey(...args: Parameters<Store['completeIdempotencyKey']>) { return this.#call('completeIdempotencyKey', args); }
  releaseIdempotencyKey(...args: Parameters<Store['releaseIdempotencyKey']>) { return this.#call('releaseIdempotencyKey', args); }
  pruneIdempotencyKeys(...args: Parameters<Store['pruneIdempotencyKeys']>) { return this.#call('pruneIdempotencyKeys', args); }
  createWebhookEndpoint(...args: Parameters<Store['createWebhookEndpoint']>) { return this.#call('createWebhookEndpoint', args); }
  listWebhookEndpoints(...args: Parameters<Store['listWebhookEndpoints']>) { return this.#call('listWebhookEndpoints', args); }
  removeWebhookEndpoint(...args: Parameters<Store['removeWebhookEndpoint']>) { return this.#call('removeWebhookEndpoint', args); }
  setWebhookEndpointEnabled(...args: Parameters<Store['setWebhookEndpointEnabled']>) { return this.#call('setWebhookEndpointEnabled', args); }
  claimWebhookDeliveries(...args: Parameters<Store['claimWebhookDeliveries']>) { return this.#call('claimWebhookDeliveries', args); }
  recordWebhookAttempt(...args: Parameters<Store['recordWebhookAttempt']>) { return this.#call('recordWebhookAttempt', args); }
  releaseWebhookDeliveries(...args: Parameters<Store['releaseWebhookDeliveries']>) { return this.#call('releaseWebhookDeliveries', args); }
  listWebhookAttempts(...args: Parameters<Store['listWebhookAttempts']>) { return this.#call('listWebhookAttempts', args); }
  redeliverWebhookEvent(...args: Parameters<Store['redeliverWebhookEvent']>) { return this.#call('redeliverWebhookEvent', args); }
  webhookOutboxStats(...args: Parameters<Store['webhookOutboxStats']>) { return this.#call('webhookOutboxStats', args); }
  pageAccounts(...args: Parameters<Store['pageAccounts']>) { return this.#call('pageAccounts', args); }
  createAdminToken(...args: Parameters<Store['createAdminToken']>) { return this.#call('createAdminToken', args); }
  listAdminTokens(...args: Parameters<Store['listAdminTokens']>) { return this.#call('listAdminTokens', args); }
  revokeAdminToken(...args: Parameters<Store['revokeAdminToken']>) { return this.#call('revokeAdminToken', args); }
  findAdminToken(...args: Parameters<Store['findAdminToken']>) { return this.#call('findAdminToken', args); }
  touchAdminToken(...args: Parameters<Store['touchAdminToken']>) { return this.#call('touchAdminToken', args); }
  ping(...args: Parameters<Store['ping']>) { return this.#call('ping', args); }
  close(...args: Parameters<Store['close']>) { return this.#call('close', args); }
}
