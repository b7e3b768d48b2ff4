// Request budgets (per API key on private routes, per client address on public ones) and a failed-authentication budget.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { RedisClient } from '../../store/redis-client.ts';
import type { RateLimitSettings } from '../../config.ts';
import { DomainError } from '../../domain/errors.ts';
import { budgetAddress } from './budget-address.ts';
import { HttpError } from '../failures/http-error.ts';
import { setBudgetHeaders } from '../wire/answer-headers.ts';
import { LocalCounters, RedisCounters, type RateCounters, type WindowCount } from './rate-counters.ts';
import { RedisKeyBudget, type KeyCharge } from './key-budget-script.ts';

export type { KeyCharge };

export interface RateLimitsOptions {
  readonly settings: RateLimitSettings;
  /** Shared counters across instances; null: per process. */
  readonly redis: RedisClient | null;
  readonly keyPrefix: string;
  readonly onRejected?: (budget: RateBudget) => void;
  /** No proxy is trusted, so the address is the connection's: worked out once per connection. */
  readonly addressIsConnection?: boolean;
  /** With Redis, what a key's charge also answers (key-budget-script.ts): last-use interval and credentials version lifetime. */
  readonly keyCharge?: { readonly touchIntervalMs: number; readonly versionLifetimeMs: number };
}

export type RateBudget = 'per_key' | 'per_address' | 'failed_auth';

export type AuthAttempt = { readonly window: number } | null;

/** `over`: the window, when this attempt was one too many. */
export type CountedAuthAttempt = { readonly attempt: AuthAttempt; readonly over: WindowCount | null };

export interface RateBudgets {
  /**
   * Spends a failed-authentication attempt before any store check, 429 when one too many: counting first stops concurrent
   * guesses all passing one check. A right attempt is given back (refundAuthAttempt).
   */
  spendAuthAttempt(request: FastifyRequest, reply: FastifyReply): AuthAttempt | Promise<AuthAttempt>;
  /** The key was right or the store could not be asked: given back in the window it was spent in. Never fails. */
  refundAuthAttempt(request: FastifyRequest, attempt: AuthAttempt): void;
  /** As spendAuthAttempt, but past the budget the caller decides (the admin port checks the token, refusing only if wrong). */
  countAuthAttempt(request: FastifyRequest): CountedAuthAttempt | Promise<CountedAuthAttempt>;
  refuseAuthAttempt(reply: FastifyReply, over: WindowCount): HttpError;
  /** Charges the caller's key (`request.keyId`), or its address without credentials; 429 when spent. */
  charge(request: FastifyRequest, reply: FastifyReply): void | Promise<void>;
  /**
   * Charges an API key of `owner` (lower-case username). Through Redis it also answers, in the same round trip, the
   * credentials version and whether a last-use stamp is due; in process it answers nothing.
   */
  chargeKey(request: FastifyRequest, reply: FastifyReply, owner: string): void | KeyCharge | Promise<void | KeyCharge>;
}

declare module 'fastify' {
  interface FastifyInstance {
    rateBudgets: RateBudgets;
  }
  interface FastifyRequest {
    keyId: string | null;
  }
}

/** Kept on the socket when the address cannot change from request to request. */
const ADDRESS_KEYS = Symbol('account-api.budget-address-keys');
type AddressKeys = { readonly authfail: string; readonly addr: string };

function addressKeysOf(address: string | undefined): AddressKeys {
  const budget = budgetAddress(address);
  return { authfail: `authfail:${budget}`, addr: `addr:${budget}` };
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

function rateLimitHeaders(reply: FastifyReply, max: number, count: WindowCount): void {
  setBudgetHeaders(reply, max, Math.max(0, max - count.current), seconds(count.resetMs));
}

function judgeCharge(reply: FastifyReply, max: number, count: WindowCount, byKey: boolean, onRejected?: (budget: RateBudget) => void): void {
  rateLimitHeaders(reply, max, count);
  if (count.current <= max) return;
  onRejected?.(byKey ? 'per_key' : 'per_address');
  throw tooMany(
    count,
    'rate_limited',
    byKey
      ? `This API key has used its ${max} requests for this window; wait for Retry-After seconds.`
      : `This address has used its ${max} requests for this window; wait for Retry-After seconds.`,
  );
}

export const rateLimits = fp(
  async function rateLimits(app: FastifyInstance, options: RateLimitsOptions) {
    const { settings } = options;
    // One set of windows per budget, so that a flood spending one (fresh addresses on /hello) cannot crowd out another.
    const local = (max: number) => new LocalCounters(settings.windowMs, { maxKeys: settings.maxWindows, countCeiling: max + 1 });
    const counters: Record<'authfail' | 'addr' | 'key', RateCounters> =
      options.redis === null
        ? { authfail: local(settings.authFailuresPerAddress), addr: local(settings.perAddress), key: local(settings.perKey) }
        : (() => {
            const shared = new RedisCounters(options.redis, settings.windowMs, `${options.keyPrefix}rate:`);
            return { authfail: shared, addr: shared, key: shared };
          })();

    const keyBudget =
      options.redis === null || options.keyCharge === undefined
        ? null
        : new RedisKeyBudget(options.redis, { windowMs: settings.windowMs, prefix: options.keyPrefix, ...options.keyCharge });

    // In process each budget has its own counters, so a key's window is its id alone (no string per request).
    const keyCounterPrefix = options.redis === null ? '' : 'key:';
    const addressKeys = (request: FastifyRequest): AddressKeys => {
      if (options.addressIsConnection !== true) return addressKeysOf(request.ip);
      const socket = request.raw.socket as { [ADDRESS_KEYS]?: AddressKeys } | null;
      if (socket === null) return addressKeysOf(request.ip);
      return (socket[ADDRESS_KEYS] ??= addressKeysOf(request.ip));
    };

    const failedAuthRefusal = (reply: FastifyReply, count: WindowCount): HttpError => {
      rateLimitHeaders(reply, settings.authFailuresPerAddress, count);
      options.onRejected?.('failed_auth');
      return tooMany(
        count,
        'too_many_failed_attempts',
        'Too many failed authentication attempts from this address; wait for Retry-After seconds before trying again.',
      );
    };
    const notCounted: CountedAuthAttempt = { attempt: null, over: null };

    const charge = (request: FastifyRequest, reply: FastifyReply): void | Promise<void> => {
      const byKey = request.keyId !== null;
      const max = byKey ? settings.perKey : settings.perAddress;
      if (max === 0) return;
      const hit = byKey ? counters.key.hit(keyCounterPrefix + request.keyId) : counters.addr.hit(addressKeys(request).addr);
      // Counted in this process, the count is judged at once: no closure, no promise on every answer.
      if (!(hit instanceof Promise)) return judgeCharge(reply, max, hit, byKey, options.onRejected);
      return settle(hit, (count) => judgeCharge(reply, max, count, byKey, options.onRejected));
    };

    app.decorateRequest('keyId', null);
    app.decorate('rateBudgets', {
      spendAuthAttempt(request, reply) {
        const max = settings.authFailuresPerAddress;
        if (max === 0) return null;
        return settle(counters.authfail.hit(addressKeys(request).authfail), (count) => {
          if (count.current <= max) return { window: count.window };
          throw failedAuthRefusal(reply, count);
        });
      },
      countAuthAttempt(request) {
        const max = settings.authFailuresPerAddress;
        if (max === 0) return notCounted;
        return settle(counters.authfail.hit(addressKeys(request).authfail), (count) => ({
          attempt: { window: count.window },
          over: count.current <= max ? null : count,
        }));
      },
      refuseAuthAttempt: failedAuthRefusal,
      refundAuthAttempt(request, attempt) {
        if (attempt === null) return;
        const refunded = counters.authfail.refund(addressKeys(request).authfail, attempt.window);
        // Redis unreachable: the attempt stays spent, which errs on the side of the budget; the request itself goes on.
        if (refunded instanceof Promise) refunded.catch(() => {});
      },
      charge,
      chargeKey(request, reply, owner) {
        if (keyBudget === null) return charge(request, reply);
        const max = settings.perKey;
        // No budget and no version asked: a round trip for the marker alone is not worth it.
        if (max === 0 && !keyBudget.answersMoreThanCount) return;
        return keyBudget.hit(owner, request.keyId!, max).then(
          (charged) => {
            if (max > 0) judgeCharge(reply, max, charged, true, options.onRejected);
            return charged;
          },
          (error: unknown) => {
            throw unavailable(error);
          },
        );
      },
    } satisfies RateBudgets);
  },
  { name: 'rate-limits' },
);
