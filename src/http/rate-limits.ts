// Request budgets (per API key on private routes, per client address on public ones) and a failed-authentication budget.
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Redis } from 'ioredis';
import type { RateLimitSettings } from '../config.ts';
import { DomainError } from '../domain/errors.ts';
import type { Access } from './authenticate.ts';
import { HttpError } from './http-error.ts';

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
  checkFailedAuth(request: FastifyRequest): Promise<void>;
  recordFailedAuth(request: FastifyRequest): Promise<void>;
  /** Charges one request (to `request.keyId` on private routes, to the address on public ones); 429 when spent. */
  charge(request: FastifyRequest, reply: FastifyReply, access: Access): Promise<void>;
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

type Limiter = ReturnType<FastifyInstance['createRateLimit']>;
type Outcome = Awaited<ReturnType<Limiter>>;

function unavailable(cause: unknown): DomainError {
  return new DomainError('unavailable', 'rate_limiter_unavailable', 'Rate limiting is unavailable right now; try again shortly.', { cause });
}

async function consult(limiter: Limiter, request: FastifyRequest, increment = true): Promise<Outcome> {
  try {
    return await limiter(request, { increment });
  } catch (error) {
    throw unavailable(error);
  }
}

function setHeaders(reply: FastifyReply, outcome: Outcome, windowMs: number): void {
  if (outcome.isAllowed) return;
  // A fresh window reports ttl 0 on read; the whole window is then what remains.
  const reset = outcome.ttlInSeconds > 0 ? outcome.ttlInSeconds : Math.ceil(windowMs / 1000);
  reply.header('RateLimit-Limit', outcome.max).header('RateLimit-Remaining', outcome.remaining).header('RateLimit-Reset', reset);
}

function tooMany(outcome: Outcome, windowMs: number, code: string, message: string): HttpError {
  const retryAfter = !outcome.isAllowed && outcome.ttlInSeconds > 0 ? outcome.ttlInSeconds : Math.ceil(windowMs / 1000);
  return new HttpError(429, code, message, { headers: { 'Retry-After': String(retryAfter) } });
}

export const rateLimits = fp(
  async function rateLimits(app: FastifyInstance, options: RateLimitsOptions) {
    const { settings } = options;
    await app.register(rateLimit, {
      global: false,
      enableDraftSpec: true,
      skipOnError: false,
      ...(options.redis === null ? {} : { redis: options.redis, nameSpace: `${options.keyPrefix}rate:` }),
    });
    const window = { timeWindow: settings.windowMs };
    const perKey = app.createRateLimit({ ...window, max: settings.perKey, keyGenerator: (request) => `key:${request.keyId}` });
    const perAddress = app.createRateLimit({ ...window, max: settings.perAddress, keyGenerator: (request) => `addr:${request.ip}` });
    const authFailures = app.createRateLimit({
      ...window,
      max: settings.authFailuresPerAddress,
      keyGenerator: (request) => `authfail:${request.ip}`,
    });

    app.decorateRequest('keyId', null);
    app.decorate('rateBudgets', {
      async checkFailedAuth(request) {
        if (settings.authFailuresPerAddress === 0) return;
        const outcome = await consult(authFailures, request, false);
        if (!outcome.isAllowed && outcome.remaining <= 0) {
          options.onRejected?.('failed_auth');
          throw tooMany(
            outcome,
            settings.windowMs,
            'too_many_failed_attempts',
            'Too many failed authentication attempts from this address; wait for Retry-After seconds before trying again.',
          );
        }
      },
      async recordFailedAuth(request) {
        if (settings.authFailuresPerAddress === 0) return;
        await consult(authFailures, request);
      },
      async charge(request, reply, access) {
        const byKey = access === 'premium';
        const max = byKey ? settings.perKey : settings.perAddress;
        if (max === 0) return;
        const outcome = await consult(byKey ? perKey : perAddress, request);
        setHeaders(reply, outcome, settings.windowMs);
        if (!outcome.isAllowed && outcome.isExceeded) {
          options.onRejected?.(byKey ? 'per_key' : 'per_address');
          throw tooMany(
            outcome,
            settings.windowMs,
            'rate_limited',
            byKey
              ? `This API key has used its ${max} requests for this window; wait for Retry-After seconds.`
              : `This address has used its ${max} requests for this window; wait for Retry-After seconds.`,
          );
        }
      },
    } satisfies RateBudgets);
  },
  { name: 'rate-limits' },
);
