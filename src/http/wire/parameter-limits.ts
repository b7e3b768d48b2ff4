// Caps how many parameters a parsed body may carry and how long each value may be, and refuses values that are not
// well-formed Unicode; forms and JSON alike.
import type { ParameterSettings } from '../../config.ts';
import { HttpError } from '../failures/http-error.ts';

/** More than `max` code points? Counted lazily: a string no longer than `max` UTF-16 units never is. */
function longerThan(value: string, max: number): boolean {
  if (value.length <= max) return false;
  let codePoints = 0;
  for (const _ of value) if (++codePoints > max) return true;
  return false;
}

/**
 * Throws 400 `too_many_parameters` or `parameter_too_long` (with `field`) for a body object past the limits.
 * A repeated form parameter counts once per value; values that are not strings are left to validation.
 */
export function checkParameterLimits(body: unknown, limits: ParameterSettings): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return;
  const entries = Object.entries(body);
  const count = entries.reduce((sum, [, value]) => sum + (Array.isArray(value) ? value.length : 1), 0);
  if (count > limits.maxParameters) {
    throw new HttpError(
      400,
      'too_many_parameters',
      `The body has ${count} parameters; this server accepts at most ${limits.maxParameters}.`,
    );
  }
  for (const [name, value] of entries) {
    const values: unknown[] = Array.isArray(value) ? value : [value];
    if (values.some((one) => typeof one === 'string' && longerThan(one, limits.maxParameterLength))) {
      throw new HttpError(
        400,
        'parameter_too_long',
        `The parameter '${name}' is longer than ${limits.maxParameterLength} characters.`,
        { field: name },
      );
    }
    // JSON can spell a lone surrogate ("\ud800"); stored, it would silently become U+FFFD. Kept exactly as sent, or refused.
    if (values.some((one) => typeof one === 'string' && !one.isWellFormed())) {
      throw new HttpError(
        400,
        'invalid_parameter',
        `The parameter '${name}' is not valid Unicode: it holds a lone surrogate (a \\uD800-\\uDFFF escape without its pair).`,
        { field: name },
      );
    }
  }
}
