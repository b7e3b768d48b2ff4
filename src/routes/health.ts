// GET /healthz (the process answers) and GET /readyz (its engines answer), outside the versioned API for load balancers.
import type { FastifyInstance } from 'fastify';
import { DomainError } from '../domain/errors.ts';
import { success } from '../http/envelope.ts';

export interface ReadinessCheck {
  readonly name: string;
  /** Resolves when the dependency answers; rejects (or times out) when it does not. */
  check(): Promise<void>;
}

export interface HealthRoutesOptions {
  readonly checks: readonly ReadinessCheck[];
  readonly timeoutMs: number;
}

function withTimeout(work: Promise<void>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

export async function healthRoutes(app: FastifyInstance, options: HealthRoutesOptions) {
  app.get('/healthz', async () => success({ status: 'ok' }));

  app.get('/readyz', async (request) => {
    const results = await Promise.all(
      options.checks.map(async ({ name, check }) => {
        try {
          await withTimeout(check(), options.timeoutMs);
          return [name, 'ok'] as const;
        } catch (error) {
          request.log.warn({ err: error, dependency: name }, 'readiness check failed');
          return [name, 'unavailable'] as const;
        }
      }),
    );
    const failing = results.filter(([, state]) => state !== 'ok').map(([name]) => name);
    if (failing.length > 0) {
      throw new DomainError('unavailable', 'not_ready', `Not ready: ${failing.join(' and ')} ${failing.length === 1 ? 'does' : 'do'} not answer.`);
    }
    return success(Object.fromEntries(results));
  });
}
