// A bar chart of table 1 as SVG, written by hand: CPU time per answer of the service, the ceiling, Fastify and Express.
import type { BenchResults, Cell } from './results.ts';

const SERIES = [
  { key: 'service', label: 'service (account-api)', colour: '#2563eb' },
  { key: 'ceiling', label: 'ceiling (bare node:http)', colour: '#9ca3af' },
  { key: 'fastify', label: 'plain Fastify + SQLite', colour: '#16a34a' },
  { key: 'express', label: 'Express 5 + SQLite', colour: '#ea580c' },
] as const;

const value = (cell: Cell) => (cell.ok ? cell.value.cpuMicrosPerAnswer : 0);
const shown = (micros: number) => (micros < 100 ? micros.toFixed(1) : micros.toFixed(0));

const WIDTH = 960;
const LABEL_WIDTH = 250;
const VALUE_ROOM = 90;
const BAR_HEIGHT = 14;
const BAR_GAP = 3;
const GROUP_GAP = 18;
const TOP = 86;

function escape(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
}

function text(x: number, y: number, content: string, attributes = ''): string {
  return `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}" ${attributes}>${escape(content)}</text>`;
}

/** A round step giving about five gridlines up to `max`. */
function gridStep(max: number): number {
  const rough = max / 5;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  return [1, 2, 2.5, 5, 10].map((factor) => factor * magnitude).find((step) => step >= rough) ?? rough;
}

export function renderChart(results: BenchResults): string {
  const rows = results.endpoints.map((row) => ({ label: row.call.label, writes: row.call.writes, cells: SERIES.map((series) => row[series.key]) }));
  // The axis fits the reads: a write that waits on fsync costs ten times more and would squeeze every read into a sliver.
  // Longer bars are cut at the edge, their figure still written.
  const reads = rows.filter((row) => !row.writes);
  const max = Math.max(1, ...(reads.length > 0 ? reads : rows).flatMap((row) => row.cells.map(value)));
  const step = gridStep(max);
  const top = Math.ceil(max / step) * step;
  const plotWidth = WIDTH - LABEL_WIDTH - VALUE_ROOM;
  const scale = (value: number) => (value / top) * plotWidth;
  const groupHeight = SERIES.length * (BAR_HEIGHT + BAR_GAP) + GROUP_GAP;
  const height = TOP + rows.length * groupHeight + 40;
  const parts: string[] = [];

  parts.push(`<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`);
  parts.push(
    text(
      16,
      26,
      `Server CPU time per answer, µs, ${results.settings.connections} connections (lower is better; POSTs' ceiling writes with node:sqlite)`,
      'font-size="16" font-weight="bold" fill="#111827"',
    ),
  );
  parts.push(text(16, 44, `${results.machine.cpu}, ${results.machine.cores} cores, Node ${results.machine.node}, ${results.machine.date}`, 'font-size="11" fill="#6b7280"'));
  let legendX = 16;
  for (const series of SERIES) {
    parts.push(`<rect x="${legendX}" y="56" width="12" height="12" fill="${series.colour}"/>`);
    parts.push(text(legendX + 18, 66, series.label, 'font-size="12" fill="#374151"'));
    // About 6.5 px per character at 12 px Helvetica: enough to keep the entries apart without measuring text.
    legendX += 18 + Math.ceil(series.label.length * 6.5) + 24;
  }

  const plotBottom = TOP + rows.length * groupHeight - GROUP_GAP + 6;
  for (let value = 0; value <= top; value += step) {
    const x = LABEL_WIDTH + scale(value);
    parts.push(`<line x1="${x.toFixed(1)}" y1="${TOP - 6}" x2="${x.toFixed(1)}" y2="${plotBottom}" stroke="#e5e7eb"/>`);
    parts.push(text(x, plotBottom + 16, `${value.toLocaleString('en-US')} µs`, 'font-size="11" fill="#6b7280" text-anchor="middle"'));
  }

  rows.forEach((row, rowIndex) => {
    const groupTop = TOP + rowIndex * groupHeight;
    const middle = groupTop + (SERIES.length * (BAR_HEIGHT + BAR_GAP)) / 2;
    parts.push(text(LABEL_WIDTH - 10, middle + 4, row.label, 'font-size="13" fill="#111827" text-anchor="end"'));
    row.cells.forEach((cell, index) => {
      const y = groupTop + index * (BAR_HEIGHT + BAR_GAP);
      if (!cell.ok) {
        parts.push(text(LABEL_WIDTH + 4, y + BAR_HEIGHT - 3, 'wrong answer: not measured', 'font-size="11" fill="#b91c1c"'));
        return;
      }
      const full = scale(cell.value.cpuMicrosPerAnswer);
      const length = Math.max(1, Math.min(plotWidth, full));
      const figure = `${shown(cell.value.cpuMicrosPerAnswer)} µs${full > plotWidth ? ' »' : ''}`;
      parts.push(`<rect x="${LABEL_WIDTH}" y="${y}" width="${length.toFixed(1)}" height="${BAR_HEIGHT}" fill="${SERIES[index]!.colour}"/>`);
      parts.push(text(LABEL_WIDTH + length + 4, y + BAR_HEIGHT - 3, figure, 'font-size="11" fill="#374151"'));
    });
  });

  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="Helvetica, Arial, sans-serif">`,
    `<title>account-api benchmark: server CPU time per answer by endpoint</title>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n');
}
