// The rule for choosing a timezone: exactly a name from the catalog, with the closest names offered when not.
import { DomainError } from './errors.ts';
import type { TimezoneCatalog } from './timezones.ts';

const SHOWN_INPUT_LIMIT = 64;

function quoted(value: string): string {
  const shown = value.length > SHOWN_INPUT_LIMIT ? `${value.slice(0, SHOWN_INPUT_LIMIT)}...` : value;
  return JSON.stringify(shown);
}

export function checkTimezone(catalog: TimezoneCatalog, value: string, field = 'timezone'): string {
  if (catalog.has(value)) return value;
  const suggestions = catalog.suggest(value);
  const hint =
    suggestions.length > 0
      ? ` Did you mean ${suggestions.join(', ')}?`
      : ' GET /api/v0/settings/timezones lists the valid names.';
  throw new DomainError('invalid', 'invalid_timezone', `${quoted(value)} is not a valid timezone (names are case-sensitive).${hint}`, {
    field,
  });
}
