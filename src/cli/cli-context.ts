// What every command gets: parsed flags, positionals, streams and the environment; and its typed usage error.
import type { Writable } from 'node:stream';
import { terminalJson, terminalText } from './terminal-text.ts';

export interface CliIo {
  readonly env: NodeJS.ProcessEnv;
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly cwd: string;
  /** process.exit: how a command stops when its output is closed. */
  readonly exit: (status: number) => void;
}

export interface CliFlags {
  readonly json: boolean;
  readonly sandbox: boolean;
  readonly 'database-url'?: string;
  readonly name?: string;
  readonly timezone?: string;
  readonly premium: boolean;
  readonly label?: string;
  // `keys create` and `keys roll` only: what a key may do, and when it stops.
  readonly scope?: string;
  readonly 'expires-in'?: string;
  readonly 'expires-at'?: string;
  readonly overlap?: string;
  // `audit` only: whose entries, made by whom, of which action, from when.
  readonly user?: string;
  readonly actor?: string;
  readonly action?: string;
  readonly since?: string;
  /** `users list` only: usernames starting with this. */
  readonly prefix?: string;
  // `webhooks` only: which events, what for, which endpoint, how many attempts.
  readonly events?: string;
  readonly description?: string;
  readonly endpoint?: string;
  readonly limit?: string;
  readonly port?: string;
  readonly host?: string;
  readonly workers?: string;
  /** `serve` only: exit when the database does not answer at start. */
  readonly 'store-fail-fast': boolean;
  /** `migrate` only: the operator decides the environment of a database with keys of both. */
  readonly 'record-environment': boolean;
  readonly force: boolean;
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
  readonly args: readonly string[];
}

export interface UsageErrorOptions {
  /** For the --help the message points to; the running command when not given. */
  readonly command?: string;
  /** Printed after the message when the words themselves were wrong. */
  readonly usage?: string;
}

/** Exit status 2, one line saying what and where to look. */
export class UsageError extends Error {
  override name = 'UsageError';
  readonly command: string | undefined;
  readonly usage: string | undefined;

  constructor(message: string, options: UsageErrorOptions = {}) {
    super(message);
    this.command = options.command;
    this.usage = options.usage;
  }
}

// Every print escapes control characters (terminal-text.ts): stored text must not drive a terminal.

export function printJson(context: CliContext, value: unknown): void {
  context.stdout.write(`${terminalJson(JSON.stringify(value, null, 2))}\n`);
}

/** A line break inside `line` is shown as \x0a, so one call is one line. */
export function printLine(context: CliContext, line: string): void {
  context.stdout.write(`${terminalText(line)}\n`);
}

/** On stderr: stdout holds only what a script captures. */
export function printNote(context: CliContext, line: string): void {
  context.stderr.write(`${terminalText(line)}\n`);
}

/** Cells are escaped before they are measured, so columns stay aligned. */
export function printTable(context: CliContext, headers: readonly string[], rows: readonly (readonly string[])[]): void {
  const shown = rows.map((row) => row.map(terminalText));
  const widths = headers.map((header, column) => Math.max(header.length, ...shown.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd();
  context.stdout.write(`${line(headers)}\n`);
  for (const row of shown) context.stdout.write(`${line(row)}\n`);
}

export interface ListShape<T> {
  readonly json: (item: T) => unknown;
  readonly empty: string;
  readonly columns: readonly string[];
  readonly row: (item: T) => readonly string[];
}

export function printList<T>(context: CliContext, items: readonly T[], shape: ListShape<T>): void {
  if (context.flags.json) return printJson(context, items.map((item) => shape.json(item)));
  if (items.length === 0) return printLine(context, shape.empty);
  printTable(context, shape.columns, items.map((item) => shape.row(item)));
}
