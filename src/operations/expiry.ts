// Key lifetimes: durations as operators write them (90d, 12h, 30m), explicit instants, and the bounds both must keep.
import { DomainError } from '../domain/errors.ts';

const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000 } as const;
const DURATION = /^(\d{1,6})([dhm])$/;
/** A date, or a date and time with seconds optional and a zone required (Z or ±hh:mm): no guessing at the server's zone. */
const INSTANT = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;
/** The longest a key may live, or an overlap last: 10 years of 365.25 days. */
export const MAX_LIFETIME_MS = Math.round(10 * 365.25 * UNIT_MS.d);
/** Keys closer than this to their expiry say so on every answer they authenticate. */
export const EXPIRY_WARNING_MS = 7 * UNIT_MS.d;

/** '90d', '12h', '30m' in milliseconds; '0' too when `zero` is allowed (an overlap). */
export function parseDuration(text: string, field: string, options: { zero?: boolean } = {}): number {
  if (options.zero === true && text === '0') return 0;
  const match = DURATION.exec(text);
  if (match === null) {
    throw new DomainError(
      'invalid',
      'invalid_duration',
      `'${text}' is not a duration: write a whole number followed by d (days), h (hours) or m (minutes), such as 90d, 12h or 30m${options.zero === true ? ', or 0' : ''}.`,
      { field },
    );
  }
  const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  if (ms === 0 && options.zero !== true) {
    throw new DomainError('invalid', 'invalid_duration', `'${text}' is no time at all: a key must live for some time.`, { field });
  }
  if (ms > MAX_LIFETIME_MS) {
    throw new DomainError('invalid', 'invalid_duration', `'${text}' is longer than 10 years, the most allowed.`, { field });
  }
  return ms;
}

/** An ISO 8601 instant (a date alone is midnight UTC) that lies in the future and within 10 years of `now`. */
export function parseExpiry(text: string, now: number, field = 'expires_at'): Date {
  const at = INSTANT.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(at)) {
    throw new DomainError(
      'invalid',
      'invalid_expiry',
      `'${text}' is not an ISO 8601 date or time with its zone, such as 2027-03-01 or 2027-03-01T12:00:00Z.`,
      { field },
    );
  }
  // Date.parse moves a day the month lacks (2027-02-30) on to the next month: a typo would quietly become another date.
  const [year, month, day] = text.slice(0, 10).split('-').map(Number) as [number, number, number];
  const calendar = new Date(Date.UTC(year, month - 1, day));
  if (calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day) {
    throw new DomainError('invalid', 'invalid_expiry', `'${text}' is not a day of the calendar: ${text.slice(0, 7)} has no day ${day}.`, { field });
  }
  return checkExpiry(new Date(at), now, field);
}

export function checkExpiry(at: Date, now: number, field = 'expires_at'): Date {
  if (at.getTime() <= now) {
    throw new DomainError('invalid', 'invalid_expiry', `The expiry ${at.toISOString()} is in the past; a new key must expire in the future.`, { field });
  }
  if (at.getTime() - now > MAX_LIFETIME_MS) {
    throw new DomainError('invalid', 'invalid_expiry', `The expiry ${at.toISOString()} is more than 10 years away, the longest a key may live.`, { field });
  }
  return at;
}
