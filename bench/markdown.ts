// Markdown pieces shared by results.md and instructions.md: tables, number formats, verdicts, footnotes and the machine.
import { SERVICE_NODE_FLAGS } from './processes.ts';
import type { Cell, Machine } from './results.ts';

export const count = (value: number) => Math.round(value).toLocaleString('en-US');
export const ms = (value: number) => (value < 10 ? value.toFixed(2) : value.toFixed(1));
export const micros = (value: number) => (value < 100 ? value.toFixed(1) : value.toFixed(0));
/** Megabytes to one decimal; 'n/a' for a figure that could not be read. */
export const megabytes = (value: number | null | undefined) => (value === null || value === undefined ? 'n/a' : value.toFixed(1));
export const times = (value: number | null) => (value === null ? 'n/a' : `${value.toFixed(2)}×`);
export const verdict = (met: boolean | null) => (met === null ? 'n/a' : met ? 'met' : 'not met');

export function table(header: readonly string[], rows: readonly (readonly string[])[], align: readonly ('l' | 'r')[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(align.map((side) => (side === 'r' ? '---:' : '---'))), ...rows.map(line)].join('\n');
}

/** Problems found while verifying, numbered for footnotes. */
export class Footnotes {
  readonly #notes: string[] = [];
  mark(cell: Cell): string {
    if (cell.ok) return '';
    return this.note(cell.problem);
  }
  note(problem: string): string {
    const text = problem.replaceAll('\n', ' ');
    // A cell shown in several tables keeps one number.
    const known = this.#notes.indexOf(text);
    if (known === -1) this.#notes.push(text);
    return `✗ wrong answer [${known === -1 ? this.#notes.length : known + 1}]`;
  }
  render(): string {
    return this.#notes.map((note, index) => `[${index + 1}] ${note}`).join('\n\n');
  }
}

function loadAverage(machine: Machine): string {
  const end = machine.loadAverageAtEnd;
  const figures = `${machine.loadAverage.toFixed(1)} at the start, ${end === null ? 'n/a' : end.toFixed(1)} at the end (1 minute; the bench's own load is in the second)`;
  // At the end the bench itself keeps a server and wrk busy, one core and a half at most: only more than that is someone else.
  const busy = machine.loadAverage > machine.cores / 2 || (end ?? 0) > machine.cores * 1.25;
  return busy ? `${figures}: other work was running, so figures are noisier than usual` : figures;
}

const code = (flags: readonly string[]) => (flags.length === 0 ? 'none' : flags.map((flag) => `\`${flag}\``).join(' '));

/** npm start's flags, which every server is started with, and those the run gave the service only (--service-node-arg). */
function nodeFlags(serviceNodeArgs: readonly string[]): string {
  const own = serviceNodeArgs.slice(SERVICE_NODE_FLAGS.length);
  return `every server: ${code(SERVICE_NODE_FLAGS)} (npm start's)${own.length === 0 ? '' : `; the service also: ${code(own)}`}`;
}

/** The rows describing the machine, for the table at the top of each results file. */
export function machineRows(machine: Machine): string[][] {
  return [
    ['date', machine.date],
    ['CPU', `${machine.cpu}, ${machine.cores} cores (nproc)`],
    ['memory', `${machine.memoryGiB.toFixed(1)} GiB`],
    ['Node', machine.node],
    ['OS', machine.kernel],
    ['load average', loadAverage(machine)],
    ['service', `commit ${machine.commit}`],
    ['Node flags', nodeFlags(machine.serviceNodeArgs)],
  ];
}
