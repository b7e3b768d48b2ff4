// What every command gets: parsed flags, positionals, streams and the environment; and its typed usage error.
import type { Writable } from 'node:stream';

export interface CliIo {
  readonly env: NodeJS.ProcessEnv;
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly cwd: string;
}

export interface CliFlags {
  readonly json: boolean;
  readonly sandbox: boolean;
  readonly 'database-url'?: string;
  readonly name?: string;
  readonly timezone?: string;
  readonly premium: boolean;
  readonly label?: string;
  readonly port?: string;
  readonly host?: string;
  /** `serve` only: processes sharing the port. */
  readonly workers?: string;
  /** `serve` only: exit when the database does not answer at start, rather than wait for it. */
  readonly 'store-fail-fast': boolean;
  /** `migrate` only: the operator decides the environment of a database whose keys are of both. */
  readonly 'record-environment': boolean;
  // `call` only: where the server is, who calls, how patiently, and what to keep of the timezone list.
  readonly 'base-url'?: string;
  readonly username?: string;
  readonly 'api-key'?: string;
  readonly 'timeout-ms'?: string;
  readonly retries?: string;
  readonly search?: string;
}

export interface CliContext extends CliIo {
  readonly flags: CliFlags;
  /** Positionals after the command (and sub-command) words. */
  readonly args: readonly string[];
}

/** Wrong words on the command line: exit status 2 and the usage text. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export function printJson(context: CliContext, value: unknown): void {
  context.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function printLine(context: CliContext, line: string): void {
  context.stdout.write(`${line}\n`);
}

/** Left-aligned columns for people; scripts use --json. */
export function printTable(context: CliContext, headers: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd();
  printLine(context, line(headers));
  for (const row of rows) printLine(context, line(row));
}

export function requireArgs(context: CliContext, names: readonly string[], usage: string): string[] {
  if (context.args.length !== names.length) {
    throw new UsageError(`expected ${names.map((name) => `<${name}>`).join(' ') || 'no arguments'}: ${usage}`);
  }
  return [...context.args];
}
