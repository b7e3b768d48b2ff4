// `npm run bench`: the service beside the ceiling, plain Fastify and Express under the same wrk load, endpoint by endpoint, with
// each server's CPU time per answer (results.md, results.svg); with --instructions, instructions per answer under callgrind
// instead (instructions.md); with --at-size, the service on PostgreSQL at 10^3 to 10^7 accounts (at-size/results.md).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAtSize } from './at-size.ts';
import { renderAtSize } from './at-size-report.ts';
import { renderChart } from './chart.ts';
import { countInstructions } from './instructions.ts';
import { renderInstructions } from './instructions-report.ts';
import { parseOptions } from './options.ts';
import { renderMarkdown } from './report.ts';
import { Fleet } from './servers.ts';
import { runTables } from './tables.ts';

const log = (line: string) => process.stderr.write(`${line}\n`);

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  const options = parseOptions(argv, process.env, process.cwd());
  if ('usage' in options) {
    process.stdout.write(options.usage);
    return argv.includes('--help') ? 0 : 2;
  }
  const command = `npm run bench${argv.length > 0 ? ` -- ${argv.join(' ')}` : ''}`;
  const work = mkdtempSync(join(tmpdir(), 'account-api-bench-'));
  const began = performance.now();
  const fleet = new Fleet();
  // What an interrupted mode must still undo besides the servers (the at-size bench's redis-server and database).
  const leftovers = new Set<() => Promise<unknown>>();
  const cleanUp = async () => {
    await fleet.stopAll();
    for (const undo of leftovers) await undo().catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
  };
  process.once('SIGINT', () => void cleanUp().then(() => process.exit(130)));
  process.once('SIGTERM', () => void cleanUp().then(() => process.exit(143)));
  try {
    const written: string[] = [];
    let markdown: string;
    if (options.atSize !== null) {
      markdown = renderAtSize(await runAtSize(options, options.atSize, command, work, fleet, leftovers, log));
      mkdirSync(options.out, { recursive: true });
      writeFileSync(join(options.out, 'results.md'), markdown);
      written.push(join(options.out, 'results.md'));
    } else if (options.instructions !== null) {
      const results = await countInstructions(options, options.instructions, command, work, fleet, log);
      markdown = renderInstructions(results);
      mkdirSync(options.out, { recursive: true });
      writeFileSync(join(options.out, 'instructions.md'), markdown);
      written.push(join(options.out, 'instructions.md'));
    } else {
      const results = await runTables(options, command, work, fleet, log);
      markdown = renderMarkdown(results, 'results.svg');
      mkdirSync(options.out, { recursive: true });
      writeFileSync(join(options.out, 'results.md'), markdown);
      writeFileSync(join(options.out, 'results.svg'), renderChart(results));
      // The figures themselves, for what computes from them (scripts/capacity-model.ts reads table 3's).
      writeFileSync(join(options.out, 'results.json'), `${JSON.stringify(results, null, 1)}\n`);
      written.push(join(options.out, 'results.md'), 'results.svg', 'results.json');
    }
    process.stdout.write(markdown);
    log(`done in ${Math.round((performance.now() - began) / 1000)} s: ${written.join(' and ')}`);
    return 0;
  } finally {
    await cleanUp();
  }
}

process.exitCode = await main();
