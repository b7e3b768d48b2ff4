// Test support: suites that need something this machine may lack (PostgreSQL, Redis, nginx, Chromium). Without it, every
// test of the suite is still registered, as skipped with the reason, so the summary's count shows each one; a suite
// skipped whole would count none. (In CI the reasons throw instead: .ci/run installs and starts everything.)
import * as nodeTest from 'node:test';

type Hook = typeof nodeTest.before;

export interface Suite {
  readonly describe: typeof nodeTest.describe;
  readonly test: typeof nodeTest.test;
  readonly before: Hook;
  readonly after: Hook;
  readonly beforeEach: Hook;
  readonly afterEach: Hook;
}

/** node:test's own functions when `skipReason` is undefined; otherwise the same shapes, with every test skipped and no hook run. */
export function requiring(skipReason: string | false | undefined): Suite {
  if (skipReason === undefined || skipReason === false) return nodeTest;
  const reason = skipReason;
  const noHook = (() => {}) as unknown as Hook;
  const skipped = ((name: string) => nodeTest.test(name, { skip: reason }, () => {})) as unknown as typeof nodeTest.test;
  return { describe: nodeTest.describe, test: skipped, before: noHook, after: noHook, beforeEach: noHook, afterEach: noHook };
}
