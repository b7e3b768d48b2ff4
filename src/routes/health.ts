// GET /healthz (the process answers) and GET /readyz (its engines answer), outside the versioned API for load balancers.
import type { FastifyInstance } from 'fastify';
import { DomainError } from '../domain/errors.ts';
import { success } from '../http/wire/envelope.ts';

export interface ReadinessCheck {
  readonly name: string;
  /** Resolves when the dependency answers; rejects (or times out) when it does not. */
  check(): Promise<void>;
}

export interface HealthRoutesOptions {
  readonly checks: readonly ReadinessCheck[];
  readonly timeoutMs: number;
  /** How long one round of checks answers every caller; 1000 ms unless a test says otherwise. */
  readonly maxAgeMs?: number;
}

function withTimeout(work: Promise<void>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

type Readiness = ReadonlyArray<readonly [name: string, state: 'ok' | 'unavailable']>;

export async function healthRoutes(app: FastifyInstance, options: HealthRoutesOptions) {
  const maxAgeMs = options.maxAgeMs ?? 1000;
  // One check at a time, its answer shared by every caller for maxAgeMs: /readyz is public and unauthenticated, so a
  // caller polling it in a loop must not turn into a query per request against the engines.
  let latest: { readonly at: number; readonly readiness: Promise<Readiness> } | null = null;
  let pending = false;

  function checkAll(): Promise<Readiness> {
    return Promise.all(
      options.checks.map(async ({ name, check }) => {
        try {
          await withTimeout(check(), options.timeoutMs);
          return [name, 'ok'] as const;
        } catch (error) {
          app.log.warn({ err: error, dependency: name }, 'readiness check failed');
          return [name, 'unavailable'] as const;
        }
      }),
    );
  }

  function readiness(): Promise<Readiness> {
    // A check still running is shared however long it takes (at most timeoutMs), never started twice.
    if (pending) return latest!.readiness;
    if (latest === null || performance.now() - latest.at >= maxAgeMs) {
      const checking = checkAll();
      pending = true;
      latest = { at: performance.now(), readiness: checking };
      const settled = () => {
        pending = false;
        // Its answer is shared for maxAgeMs from when it came, not from when it was asked.
        if (latest?.readiness === checking) latest = { at: performance.now(), readiness: checking };
      };
      checking.then(settled, settled);
    }
    return latest.readiness;
  }

  app.get('/healthz', async () => success({ status: 'ok' }));

  app.get('/readyz', async () => {
    const results = await readiness();
    const failing = results.filter(([, state]) => state !== 'ok').map(([name]) => name);
    if (failing.length > 0) {
      throw new DomainError('unavailable', 'not_ready', `Not ready: ${failing.join(' and ')} ${failing.length === 1 ? 'does' : 'do'} not answer.`);
    }
    return success(Object.fromEntries(results));
  });
}
