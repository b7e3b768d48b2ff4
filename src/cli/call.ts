// `account-api call ...`: one request to a running server through the typed client, printed for people or as its envelope.
import { AccountApiClient, AccountApiError } from '../../client/src/index.ts';
import { loadCallConfig, type CallConfig } from '../config.ts';
import { printJson, printLine, UsageError, type CliContext, type CliFlags } from './cli-context.ts';

export const CALL_USAGE = `account-api call hello [--name NAME]
account-api call user get
account-api call user set --name NAME
account-api call settings get
account-api call settings set --timezone TZ
account-api call timezones [--search TEXT]`;

export const CALL_OPTIONS = `call sends one request to a running server and opens no database. It takes
  --base-url URL      without /api/v0 (default: ACCOUNT_API_URL, else http://localhost:8080; with --sandbox:
                      ACCOUNT_API_SANDBOX_URL, else http://localhost:8081)
  --username NAME     with --api-key KEY: HTTP Basic credentials (default: ACCOUNT_API_USERNAME, ACCOUNT_API_KEY)
  --sandbox           the sandbox: sandbox keys only (also ACCOUNT_API_SANDBOX=1)
  --timeout-ms MS     per attempt (default 10000)
  --retries N         retries on 429 and 503, each waiting as Retry-After asks, at most 30 s (default 0: reported at once)
  --json              the server's whole envelope {status, messages, meta, data}; with --search, data holds the matches only`;

/** The flags that only `call` reads; the other commands refuse them, and `call` refuses theirs. */
export const CALL_FLAGS = ['base-url', 'username', 'api-key', 'timeout-ms', 'retries', 'search'] as const;

/** What a call answered: the envelope as sent (for --json) and the lines a person reads. */
interface Answer {
  readonly envelope: { readonly data: unknown };
  readonly lines: readonly string[];
}

type Send = (client: AccountApiClient) => Promise<Answer>;

/** One line per field, `name: value`, in the server's order. */
function fieldLines(envelope: { readonly data: object }): Answer {
  return { envelope, lines: Object.entries(envelope.data).map(([field, value]) => `${field}: ${String(value)}`) };
}

function refuseFlags(command: string, flags: CliFlags, names: readonly ('name' | 'timezone' | 'search')[]): void {
  for (const name of names) {
    if (flags[name] !== undefined) throw new UsageError(`--${name} does not apply to 'call ${command}'\n${CALL_USAGE}`);
  }
}

function required(command: string, value: string | undefined, flag: string): string {
  if (value === undefined) throw new UsageError(`'call ${command}' needs ${flag}\n${CALL_USAGE}`);
  return value;
}

/** The request the words and flags ask for; a UsageError, before anything is sent, when they ask for none. */
function planCall(words: readonly string[], flags: CliFlags): Send {
  const command = words.join(' ');
  switch (command) {
    case 'hello': {
      refuseFlags(command, flags, ['timezone', 'search']);
      const name = flags.name;
      return async (client) => fieldLines(name === undefined ? await client.envelope('GET /hello') : await client.envelope('POST /hello', { name }));
    }
    case 'user get':
      refuseFlags(command, flags, ['name', 'timezone', 'search']);
      return async (client) => fieldLines(await client.envelope('GET /user'));
    case 'user set': {
      refuseFlags(command, flags, ['timezone', 'search']);
      const name = required(command, flags.name, '--name NAME');
      return async (client) => fieldLines(await client.envelope('POST /user', { name }));
    }
    case 'settings get':
      refuseFlags(command, flags, ['name', 'timezone', 'search']);
      return async (client) => fieldLines(await client.envelope('GET /settings'));
    case 'settings set': {
      refuseFlags(command, flags, ['name', 'search']);
      const timezone = required(command, flags.timezone, '--timezone TZ');
      return async (client) => fieldLines(await client.envelope('POST /settings', { timezone }));
    }
    case 'timezones': {
      refuseFlags(command, flags, ['name', 'timezone']);
      const search = flags.search?.toLowerCase();
      return async (client) => {
        const envelope = await client.envelope('GET /settings/timezones');
        const data = search === undefined ? envelope.data : envelope.data.filter((zone) => zone.toLowerCase().includes(search));
        return { envelope: { ...envelope, data }, lines: data };
      };
    }
    default: {
      const known = ['hello', 'user', 'settings', 'timezones'];
      const group = words[0];
      const problem =
        group === undefined ? 'which call?' : known.includes(group) ? `'call ${command}' is not a call` : `unknown call '${group}'`;
      throw new UsageError(`${problem}\n${CALL_USAGE}`);
    }
  }
}

function clientFor(config: CallConfig): AccountApiClient {
  try {
    return new AccountApiClient({
      sandbox: config.sandbox,
      timeoutMs: config.timeoutMs,
      retries: config.retries,
      ...(config.baseUrl === undefined ? {} : { baseUrl: config.baseUrl }),
      ...(config.credentials ?? {}),
    });
  } catch (error) {
    // The client refuses a key of the other environment before sending it; its words name its option, not our flag.
    if (!(error instanceof AccountApiError && error.code === 'wrong_environment')) throw error;
    throw new AccountApiError({
      status: 0,
      code: 'wrong_environment',
      message: config.sandbox
        ? 'This is a live key (aapi_live_), but --sandbox (or ACCOUNT_API_SANDBOX=1) asks for the sandbox: use a sandbox key, or drop --sandbox.'
        : "This is a sandbox key (aapi_sandbox_): add --sandbox (and the sandbox's --base-url), or use a live key.",
    });
  }
}

/** The server's own words, with what a script or an operator needs to act on them. */
function reportApiError(error: AccountApiError, context: CliContext): void {
  if (context.flags.json) {
    const { status, code, message } = error;
    context.stderr.write(`${JSON.stringify({ error: { status, code, field: error.field ?? null, message } })}\n`);
    return;
  }
  const details = [
    error.status === 0 ? error.code : `${error.status} ${error.code}`,
    ...(error.field === undefined ? [] : [`field ${error.field}`]),
    ...(error.retryAfterSeconds === undefined ? [] : [`retry after ${error.retryAfterSeconds} s`]),
    ...(error.requestId === undefined ? [] : [`request id ${error.requestId}`]),
  ];
  context.stderr.write(`account-api: ${error.message} (${details.join(', ')})\n`);
}

/** Runs `call <words>`: 0 on success; 1, with the server's message on stderr, when the call fails. */
export async function callCommand(context: CliContext): Promise<number> {
  const send = planCall(context.args, context.flags);
  const { flags } = context;
  const config = loadCallConfig(context.env, {
    baseUrl: flags['base-url'],
    username: flags.username,
    apiKey: flags['api-key'],
    sandbox: flags.sandbox,
    timeoutMs: flags['timeout-ms'],
    retries: flags.retries,
  });
  let answer: Answer;
  try {
    answer = await send(clientFor(config));
  } catch (error) {
    if (!(error instanceof AccountApiError)) throw error;
    reportApiError(error, context);
    return 1;
  }
  if (flags.json) printJson(context, answer.envelope);
  else for (const line of answer.lines) printLine(context, line);
  if (!flags.json && answer.lines.length === 0 && flags.search !== undefined) {
    context.stderr.write(`account-api: no timezone name contains '${flags.search}'.\n`);
  }
  return 0;
}
