// The methods of a store, read from the object itself: an engine store is the composition of one part per concern
// (composeStore), and a wrapper (connecting-store.ts, tracing/traced-store.ts) forwards every method without listing them.
// Adding a store method touches the concern's interface, its two engine files and a contract case, nothing else.
import type { Store } from './store.ts';

/** A method of the Store interface, by name. */
export type StoreMethod = Exclude<keyof Store, 'engine' | 'environment'>;

type Method = (...args: never[]) => unknown;

/**
 * Every public method of an object, by name: those its class defines (its prototype chain, up to Object) and its own function
 * properties (a composed part's bound methods, a wrapper's forwarders, a test's fake); private (#) ones are not seen.
 */
function methodNamesOf(object: object): string[] {
  const names = new Set<string>();
  for (let proto: object | null = object; proto !== null && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name !== 'constructor' && typeof Object.getOwnPropertyDescriptor(proto, name)?.value === 'function') names.add(name);
    }
  }
  return [...names];
}

export function storeMethodsOf(engine: Store): StoreMethod[] {
  return methodNamesOf(engine) as StoreMethod[];
}

function define(target: object, name: string, value: Method): void {
  Object.defineProperty(target, name, { value, writable: true, configurable: true, enumerable: false });
}

/**
 * Gives `wrapper` one own property per method of `engine`, made by `forward`: the wrapper is then a Store whatever methods
 * the interface gains. A method the wrapper's own class defines (ConnectingStore's close) is its own and left alone.
 */
export function defineForwarders(wrapper: object, engine: Store, forward: (method: StoreMethod) => Method): void {
  const own = Object.getPrototypeOf(wrapper) as object;
  for (const method of storeMethodsOf(engine)) {
    if (Object.hasOwn(own, method)) continue;
    define(wrapper, method, forward(method));
  }
}

/**
 * A method of `engine` that can be called without it: an own property is one already (a composed part's method is bound to its
 * part, a wrapper's forwarder is an arrow), so it is handed out as it is, with no frame more; a class's method is bound.
 */
export function callable(engine: Store, method: StoreMethod): Method {
  const value = engine[method] as Method;
  return Object.hasOwn(engine, method) ? value : value.bind(engine);
}

/**
 * Makes `store` the composition of `parts`, one per concern: an own property per public method of each part, bound to it.
 * Two parts defining the same method is a mistake, refused at once.
 */
export function composeStore(store: object, parts: readonly object[]): void {
  for (const part of parts) {
    for (const name of methodNamesOf(part)) {
      if (Object.hasOwn(store, name)) throw new Error(`store method ${name} is defined by two parts`);
      define(store, name, ((part as Record<string, Method>)[name] as Method).bind(part));
    }
  }
}
