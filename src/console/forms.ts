// Reading the console's form posts and addresses' parameters: one text per field, the hidden proof and the submit button
// ignored, nothing guessed.
import { DomainError } from '../domain/errors.ts';

/**
 * The field's text (of a form body or a query string); undefined when absent. A field sent twice is refused, as the admin API
 * refuses it: never an array for a page to call string methods on.
 */
export function field(body: unknown, name: string): string | undefined {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    throw new DomainError('invalid', 'duplicate_parameter', `The field '${name}' was sent more than once.`, { field: name });
  }
  return value;
}

/** An optional text field: empty means not given, so an untouched input changes nothing. */
export function optionalField(body: unknown, name: string): string | undefined {
  const value = field(body, name)?.trim();
  return value === '' ? undefined : value;
}

/** The console's own addresses use path segments the store gave out; encoded all the same. */
export function segment(value: string): string {
  return encodeURIComponent(value);
}
