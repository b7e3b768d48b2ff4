// An instant given by a caller (a filter's bound): an ISO 8601 date, or a date and time with its zone; never the server's zone.
import { DomainError } from './errors.ts';

const INSTANT = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/** Undefined stays undefined; anything else unparsable is refused as `invalid_<field>`. */
export function parseInstant(raw: string | undefined, field: string): Date | undefined {
  if (raw === undefined) return undefined;
  const at = INSTANT.test(raw) ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(at)) {
    throw new DomainError('invalid', `invalid_${field}`, `'${raw}' is not an ISO 8601 date or time with its zone, such as 2026-11-01 or 2026-11-01T08:00:00Z.`, {
      field,
    });
  }
  return new Date(at);
}
