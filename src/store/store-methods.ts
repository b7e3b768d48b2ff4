// The methods of a store, read from the engine object itself, so that a wrapper (connecting-store.ts, tracing/traced-store.ts)
// forwards every one without listing them: adding a store method touches the interface, the engines and a contract case.
import type { Store } from './store.ts';

/** A method of the Store interface, by name. */
export type StoreMethod = Exclude<keyof Store, 'engine' | 'environment'>;

/**
 * Every public method of an engine, by name: those its class defines (its prototype chain, up to Object) and its own function
 * properties (a wrapper's forwarders, a test's fake); private (#) ones are not seen.
 */
export function storeMethodsOf(engine: Store): StoreMethod[] {
  const names = new Set<string>();
  for (let proto: object | null = engine; proto !== null && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name !== 'constructor' && typeof Object.getOwnPropertyDescriptor(proto, name)?.value === 'function') names.add(name);
    }
  }
  return [...names] as StoreMethod[];
}

/**
 * Gives `wrapper` one own property per method of `engine`, made by `forward`: the wrapper is then a Store whatever methods
 * the interface gains. A method the wrapper's own class defines (ConnectingStore's close) is its own and left alone.
 */
export function defineForwarders(wrapper: object, engine: Store, forward: (method: StoreMethod) => (...args: never[]) => unknown): void {
  const own = Object.getPrototypeOf(wrapper) as object;
  for (const method of storeMethodsOf(engine)) {
    if (Object.hasOwn(own, method)) continue;
    Object.defineProperty(wrapper, method, { value: forward(method), writable: true, configurable: true, enumerable: false });
  }
}
