// Strict application/x-www-form-urlencoded parsing: invalid percent-encoding or UTF-8 is an error, not mojibake.
import { HttpError } from '../failures/http-error.ts';

function decode(component: string): string {
  try {
    return decodeURIComponent(component.replaceAll('+', ' '));
  } catch {
    throw new HttpError(400, 'malformed_body', 'The form body has invalid percent-encoding or is not UTF-8.');
  }
}

/** The values of a form parameter given more than once; its own type so JSON arrays are not mistaken for it. */
export class RepeatedValues extends Array<string> {}

/**
 * Parses `a=1&b=2` into an object without a prototype (so `__proto__=x` is just a parameter).
 * A parameter given twice becomes `RepeatedValues`, which validation reports as `duplicate_parameter`.
 */
export function parseForm(body: string): Record<string, string | string[]> {
  const result: Record<string, string | string[]> = Object.create(null);
  if (body === '') return result;
  for (const pair of body.split('&')) {
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    const name = decode(equals === -1 ? pair : pair.slice(0, equals));
    const value = decode(equals === -1 ? '' : pair.slice(equals + 1));
    const previous = result[name];
    if (previous === undefined) result[name] = value;
    else if (Array.isArray(previous)) previous.push(value);
    else {
      const repeated = new RepeatedValues();
      repeated.push(previous, value);
      result[name] = repeated;
    }
  }
  return result;
}
