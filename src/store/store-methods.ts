// A store's methods, read from the object itself: engines compose one part per concern (composeStore) and wrappers forward
// every method without listing them, so a new method touches its interface, engine files and contract case only.
import type { Store } from './store.ts';

export type StoreMethod = Exclude<keyof Store, 'engine' | 'environment'>;

type Method = (...args: never[]) => unknown;

/** Its class's methods (up to Object) and own function properties (bound parts, forwarders, fakes); not private (#) ones. */
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

/** One forwarder per engine method, so the wrapper stays a Store as the interface grows; its class's own methods are left alone. */
export function defineForwarders(wrapper: object, engine: Store, forward: (method: StoreMethod) => Method): void {
  const own = Object.getPrototypeOf(wrapper) as object;
  for (const method of storeMethodsOf(engine)) {
    if (Object.hasOwn(own, method)) continue;
    define(wrapper, method, forward(method));
  }
}

/** Own properties are handed out as they are (already bound or arrows), with no frame more; a class's method is bound. */
export function callable(engine: Store, method: StoreMethod): Method {
  const value = engine[method] as Method;
  return Object.hasOwn(engine, method) ? value : value.bind(engine);
}

/** An own bound property per public method of each part; two parts defining one method are refused. */
export function composeStore(store: object, parts: readonly object[]): void {
  for (const part of parts) {
    for (const name of methodNamesOf(part)) {
      if (Object.hasOwn(store, name)) throw new Error(`store method ${name} is defined by two parts`);
      define(store, name, ((part as Record<string, Method>)[name] as Method).bind(part));
    }
  }
}
