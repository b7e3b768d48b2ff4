// What `account-api serve` tells people once the service listens: where, and how to make a first call.
import type { Config } from '../config.ts';
import type { DemoAccount } from '../sandbox/demo-accounts.ts';
import { describeDatabase } from '../store/open-store.ts';
import type { CliContext } from './cli-context.ts';

/** What preparing the store found at start. */
export interface StoreSummary {
  readonly demoAccounts: readonly DemoAccount[];
  readonly hasAccounts: boolean;
}

/** What people are told once the service listens, by the one process that speaks for it. */
export interface Announcement {
  readonly url: string;
  readonly metricsUrl: string | null;
  /** Where the admin API answers (ADMIN_PORT); absent or null when it is off. */
  readonly adminUrl?: string | null;
  /** null while the database is still awaited: announceStore follows once it answers. */
  readonly store: StoreSummary | null;
  /** Shown only when above 1. */
  readonly workers: number;
}

export function announce(context: CliContext, config: Config, shown: Announcement): void {
  // Said plainly, whatever LOG_LEVEL is: people and scripts wait for this line.
  if (shown.metricsUrl !== null) context.stderr.write(`metrics at ${shown.metricsUrl}\n`);
  if (shown.adminUrl != null) context.stderr.write(`admin API at ${shown.adminUrl}/admin/v0 (Authorization: Bearer <admin token>)\n`);
  const workers = shown.workers > 1 ? `, ${shown.workers} workers` : '';
  context.stderr.write(`account-api listening at ${boundUrl(config.host, shown.url)} (${config.environment}, ${config.database.engine}${workers})${reach(config.host, shown.url)}\n`);
  if (shown.store === null) {
    context.stderr.write(
      `Waiting for ${describeDatabase(config.database)} (retrying): until it answers, requests that need it are answered 503 store_unavailable.\n`,
    );
    return;
  }
  firstSteps(context, config, shown.url, shown.store);
}

const WILDCARDS: Readonly<Record<string, string>> = { '0.0.0.0': 'every IPv4 interface', '::': 'every interface' };

/** The address the socket is bound to, as HOST says (0.0.0.0 is every interface, not this machine only). */
function boundUrl(host: string, url: string): string {
  const bound = new URL(url);
  bound.hostname = host.includes(':') ? `[${host}]` : host;
  return bound.origin;
}

/** For a wildcard: that other machines can reach it, how to keep it local, and the URL to use from here. */
function reach(host: string, url: string): string {
  const wildcard = WILDCARDS[host];
  return wildcard === undefined ? '' : `: ${wildcard}, so other machines can reach it (HOST=127.0.0.1 keeps it to this one); from this machine: ${url}`;
}

/** The rest of the announcement, once a database that was awaited at start has answered. */
export function announceStore(context: CliContext, config: Config, url: string, store: StoreSummary): void {
  context.stderr.write(`${describeDatabase(config.database)} answered: serving requests.\n`);
  firstSteps(context, config, url, store);
}

/** The part that needs the database: the sandbox's demo keys, or how to make a first account. */
function firstSteps(context: CliContext, config: Config, url: string, store: StoreSummary): void {
  if (config.environment === 'sandbox') {
    const lines = store.demoAccounts.map(
      (demo) => `  ${demo.username.padEnd(11)} ${demo.premium ? 'Premium    ' : 'not Premium'}  ${demo.key.token}`,
    );
    // A demo account the seed could not provide was reported in a warning above; its key is not advertised.
    const listed = lines.length === 0 ? ' No demo account is available (see the warnings above).' : ` Demo accounts and keys:\n${lines.join('\n')}`;
    context.stderr.write(`Sandbox at ${url}/api/v0 (X-Environment: sandbox).${listed}\n`);
  } else if (!store.hasAccounts) {
    context.stderr.write(
      `No accounts yet. Create a Premium account and a key for it with:\n` +
        `  npx account-api users create alice --name "Alice" --premium\n` +
        `  npx account-api keys create alice\n` +
        `then try: curl -u alice:THE_KEY ${url}/api/v0/user\n`,
    );
  }
}
