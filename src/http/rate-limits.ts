// Request budgets (per API key on private routes, per client address on public ones) and a failed-authentication budget.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Redis } from 'ioredis';
import type { RateLimitSettings } from '../config.ts';
import { DomainError } from '../domain/errors.ts';
import type { Access } from './authenticate.ts';
import { HttpError } from './http-error.ts';
import { LocalCounters, RedisCounters, type RateCounters, type WindowCount } from './rate-counters.ts';

export interface RateLimitsOptions {
  readonly settings: RateLimitSettings;
  /** Shared counters for every instance; null keeps them in this process (per instance). */
  readonly redis: Redis | null;
  readonly keyPrefix: string;
  /** Told of every 429, for metrics. */
  readonly onRejected?: (budget: RateBudget) => void;
}

export type RateBudget = 'per_key' | 'per_address' | 'failed_auth';

/** The budgets authentication spends: failed attempts per address, then requests per key or per address. */
export interface RateBudgets {
  /** Refuses with 429 when this address has used up its failed attempts, before any credential is checked. */
  checkFailedAuth(request: FastifyRequest): void | Promise<void>;
  recordFailedAuth(request: FastifyRequest): void | Promise<void>;
  /** Charges one request (to `request.keyId` on private routes, to the address on public ones); 429 when spent. */
  charge(request: FastifyRequest, reply: FastifyReply, access: Access): void | Promise<void>;
}

declare module 'fastify' {
  interface FastifyInstance {
    rateBudgets: RateBudgets;
  }
  interface FastifyRequest {
    /** The id of the key that authenticated this request, for its per-key budget. */
    keyId: string | null;
  }
}

function unavailable(cause: unknown): DomainError {
  return new DomainError('unavailable', 'rate_limiter_unavailable', 'Rate limiting is unavailable right now; try again shortly.', { cause });
}

/** Counts synchronously in this process; through Redis, a failure to count is a 503, never a free pass. */
function settle<T>(outcome: WindowCount | Promise<WindowCount>, then: (count: WindowCount) => T): T | Promise<T> {
  if (!(outcome instanceof Promise)) return then(outcome);
  return outcome.then(then, (error: unknown) => {
    throw unavailable(error);
  });
}

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

function tooMany(count: WindowCount, code: string, message: string): HttpError {
  return new HttpError(429, code, message, { headers: { 'Retry-After': String(seconds(count.resetMs)) } });
}

export const rateLimits = fp(
  async function rateLimits(app: FastifyInstance, options: RateLimitsOptions) {
    const { settings } = options;
    const counters: RateCounters =
      options.redis === null
        ? new LocalCounters(settings.windowMs)
        : new RedisCounters(options.redis, settings.windowMs, `${options.keyPrefix}rate:`);

    app.decorateRequest('keyId', null);
    app.decorate('rateBudgets', {
      checkFailedAuth(request) {
        if (settings.authFailuresPerAddress === 0) return;
        return settle(counters.peek(`authfail:${request.ip}`), (count) => {
          if (count.current < settings.authFailuresPerAddress) return;
          options.onRejected?.('failed_auth');
          throw tooMany(
            count,
            'too_many_failed_attempts',
            'Too many failed authentication attempts from this address; wait for Retry-After seconds before trying again.',
          );
        });
      },
      recordFailedAuth(request) {
        if (settings.authFailuresPerAddress === 0) return;
        return settle(counters.hit(`authfail:${request.ip}`), () => undefined);
      },
      charge(request, reply, access) {
        const byKey = access === 'premium';
        const max = byKey ? settings.perKey : settings.perAddress;
        if (max === 0) return;
        return settle(counters.hit(byKey ? `key:${request.keyId}` : `addr:${request.ip}`), (count) => {
          reply.header('RateLimit-Limit', max);
          reply.header('RateLimit-Remaining', Math.max(0, max - count.current));
          reply.header('RateLimit-Reset', seconds(count.resetMs));
          if (count.current <= max) return;
          options.onRejected?.(byKey ? 'per_key' : 'per_address');
          throw tooMany(
            count,
            'rate_limited',
            byKey
              ? `This API key has used its ${max} requests for this window; wait for Retry-After seconds.`
              : `This address has used its ${max} requests for this window; wait for Retry-After seconds.`,
          );
        });
      },
    } satisfies RateBudgets);
  },
  { name: 'rate-limits' },
);
