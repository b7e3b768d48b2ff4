// `node scripts/seed-accounts.ts`: migrates a database with the service's own command, then writes many Premium accounts with
// real keys into it (bench/bulk-accounts.ts) and their `username:key` lines to a file, for load tests on either engine.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { seedAccounts } from '../bench/bulk-accounts.ts';

const USAGE = `node scripts/seed-accounts.ts --database-url URL --accounts N [--keys-out FILE] [--prefix NAME]

  --database-url URL  sqlite:PATH or postgres://..., as DATABASE_URL (the database must exist; it is migrated first)
  --accounts N        how many accounts, each Premium with one live key
  --keys-out FILE     where the username:key lines go (one per account)
  --prefix NAME       usernames are NAME1, NAME2...; they must not exist yet   default seed
`;

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        'database-url': { type: 'string' },
        accounts: { type: 'string' },
        'keys-out': { type: 'string' },
        prefix: { type: 'string', default: 'seed' },
        help: { type: 'boolean', default: false },
      },
    }));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const accounts = Number(values.accounts);
  const url = values['database-url'];
  if (values.help || url === undefined || !Number.isInteger(accounts) || accounts <= 0) {
    process.stderr.write(USAGE);
    return values.help ? 0 : 2;
  }
  const began = performance.now();
  // The schema is the service's to make: its own migrate command, as an operator runs it.
  const migrate = spawnSync(process.execPath, [join(import.meta.dirname, '../src/main.ts'), 'migrate'], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: url },
    encoding: 'utf8',
  });
  if (migrate.status !== 0) {
    process.stderr.write(`migrate failed (${migrate.status ?? migrate.signal}):\n${migrate.stderr}${migrate.stdout}`);
    return 1;
  }
  const migrated = performance.now();
  try {
    await seedAccounts(url, { accounts, usernamePrefix: values.prefix, keysOut: values['keys-out'] ?? null });
  } catch (error) {
    process.stderr.write(`seeding failed: ${(error as Error).message}\n`);
    return 1;
  }
  const keys = values['keys-out'] === undefined ? '' : `; keys in ${values['keys-out']}`;
  const seconds = (from: number, to: number) => ((to - from) / 1000).toFixed(1);
  process.stderr.write(
    `seeded ${accounts.toLocaleString('en-US')} accounts in ${seconds(migrated, performance.now())} s (migrate ${seconds(began, migrated)} s)${keys}\n`,
  );
  return 0;
}

process.exitCode = await main();
