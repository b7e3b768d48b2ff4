// `account-api call ...`: one request to a running server through the typed client, printed for people or as its envelope.
import { AccountApiClient, AccountApiError } from '../../client/src/index.ts';
import { loadCallConfig, type CallConfig } from '../config.ts';
import { terminalJson, terminalText } from './terminal-text.ts';
import { printJson, printLine, UsageError, type CliContext, type CliFlags } from './cli-context.ts';
import { commandName, type CommandGroup, type CommandSpec, type FlagName, type FlagSpec } from './command-spec.ts';

const CONNECTION_FLAGS = {
  'base-url': {
    type: 'string',
    value: 'URL',
    help: 'the server, without /api/v0 (default: ACCOUNT_API_URL, else http://localhost:8080; with --sandbox: ACCOUNT_API_SANDBOX_URL, else http://localhost:8081)',
    shared: true,
  },
  username: {
    type: 'string',
    value: 'NAME',
    help: 'with --api-key, the HTTP Basic credentials (default: ACCOUNT_API_USERNAME and ACCOUNT_API_KEY, which ps and shell history do not show)',
    shared: true,
  },
  'api-key': { type: 'string', value: 'KEY', help: 'the API key of --username (default: ACCOUNT_API_KEY)', shared: true },
  sandbox: { type: 'boolean', help: 'call the sandbox, with sandbox keys only (also ACCOUNT_API_SANDBOX=1)', shared: true },
  'timeout-ms': { type: 'string', value: 'MS', help: 'per attempt (default 10000)', shared: true },
  retries: { type: 'string', value: 'N', help: 'retries on 429 and 503, each waiting as Retry-After asks, at most 30 s (default 0: reported at once)', shared: true },
  json: {
    type: 'boolean',
    help: "the server's whole envelope {status, messages, meta, data}; a failure is {\"error\": {status, code, field, message}} on stderr",
    shared: true,
  },
} as const satisfies Partial<Record<FlagName, FlagSpec>>;

/** The envelope as sent (for --json) and the lines a person reads. */
interface Answer {
  readonly envelope: { readonly data: unknown };
  readonly lines: readonly string[];
}

type Send = (client: AccountApiClient) => Promise<Answer>;

/** `name: value`, in the server's order. */
function fieldLines(envelope: { readonly data: object }): Answer {
  return { envelope, lines: Object.entries(envelope.data).map(([field, value]) => `${field}: ${String(value)}`) };
}

interface Call {
  readonly spec: CommandSpec;
  /** Every call but hello: without credentials it could only be answered 401. */
  readonly needsCredentials: boolean;
  /** From flags the parser has checked. */
  plan(flags: CliFlags): Send;
}

const CALLS: readonly Call[] = [
  {
    spec: {
      words: ['call', 'hello'],
      args: [],
      summary: 'GET /hello: the display name of the caller, World without credentials; with --name, POST /hello echoes the name.',
      flags: { name: { type: 'string', value: 'NAME', help: 'POST /hello with this name' }, ...CONNECTION_FLAGS },
      examples: ['npx account-api call hello --name "Ada Lovelace"'],
    },
    needsCredentials: false,
    plan: ({ name }) => async (client) => fieldLines(name === undefined ? await client.envelope('GET /hello') : await client.envelope('POST /hello', { name })),
  },
  {
    spec: {
      words: ['call', 'user', 'get'],
      args: [],
      summary: 'GET /user: the account of the caller.',
      flags: CONNECTION_FLAGS,
      examples: ['ACCOUNT_API_USERNAME=alice ACCOUNT_API_KEY=$KEY npx account-api call user get'],
    },
    needsCredentials: true,
    plan: () => async (client) => fieldLines(await client.envelope('GET /user')),
  },
  {
    spec: {
      words: ['call', 'user', 'set'],
      args: [],
      summary: "POST /user: changes the caller's display name.",
      flags: { name: { type: 'string', value: 'NAME', help: 'the new display name', required: true }, ...CONNECTION_FLAGS },
      examples: ['npx account-api call user set --name "Alice Liddell"'],
    },
    needsCredentials: true,
    plan: ({ name }) => async (client) => fieldLines(await client.envelope('POST /user', { name: name! })),
  },
  {
    spec: {
      words: ['call', 'settings', 'get'],
      args: [],
      summary: "GET /settings: the caller's timezone.",
      flags: CONNECTION_FLAGS,
      examples: ['npx account-api call settings get --json'],
    },
    needsCredentials: true,
    plan: () => async (client) => fieldLines(await client.envelope('GET /settings')),
  },
  {
    spec: {
      words: ['call', 'settings', 'set'],
      args: [],
      summary: "POST /settings: changes the caller's timezone.",
      flags: { timezone: { type: 'string', value: 'TZ', help: 'an IANA timezone such as Europe/Paris', required: true }, ...CONNECTION_FLAGS },
      examples: ['npx account-api call settings set --timezone Europe/Paris'],
    },
    needsCredentials: true,
    plan: ({ timezone }) => async (client) => fieldLines(await client.envelope('POST /settings', { timezone: timezone! })),
  },
  {
    spec: {
      words: ['call', 'timezones'],
      args: [],
      summary: 'GET /settings/timezones: every valid timezone, one a line, in the server\'s order.',
      flags: { search: { type: 'string', value: 'TEXT', help: 'only the names that contain TEXT, ignoring case' }, ...CONNECTION_FLAGS },
      examples: ['npx account-api call timezones --search par'],
    },
    needsCredentials: true,
    plan: (flags) => {
      const search = flags.search?.toLowerCase();
      return async (client) => {
        const envelope = await client.envelope('GET /settings/timezones');
        const data = search === undefined ? envelope.data : envelope.data.filter((zone) => zone.toLowerCase().includes(search));
        return { envelope: { ...envelope, data }, lines: data };
      };
    },
  },
];

export const CALL: CommandGroup = {
  name: 'call',
  summary:
    'One request to a running server through the typed client, printed for people (or, with --json, its envelope). It opens no ' +
    'database, so it works from any machine that reaches the server.',
  commands: CALLS.map((call) => call.spec),
};

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
    // The client's words name its option, not our flag.
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

function reportApiError(error: AccountApiError, context: CliContext): void {
  if (context.flags.json) {
    const { status, code, message } = error;
    context.stderr.write(`${terminalJson(JSON.stringify({ error: { status, code, field: error.field ?? null, message } }))}\n`);
    return;
  }
  const details = [
    error.status === 0 ? error.code : `${error.status} ${error.code}`,
    ...(error.field === undefined ? [] : [`field ${error.field}`]),
    ...(error.retryAfterSeconds === undefined ? [] : [`retry after ${error.retryAfterSeconds} s`]),
    ...(error.requestId === undefined ? [] : [`request id ${error.requestId}`]),
  ];
  // Escaped: a server (or what sits in front of it) could send anything.
  context.stderr.write(`account-api: ${terminalText(`${error.message} (${details.join(', ')})`)}\n`);
}

/**
 * A refused value from this command line exits 2: a field sent from a flag (400 naming it), or --api-key of the other
 * environment. The server judges names and timezones: it may run another version.
 */
function refusesCommandLine(error: AccountApiError, call: Call, flags: CliFlags): boolean {
  if (error.code === 'wrong_environment') return flags['api-key'] !== undefined;
  const field = error.field as keyof CliFlags | undefined;
  return error.status === 400 && field !== undefined && field in call.spec.flags && flags[field] !== undefined;
}

/** 0 on success; 1 when the call fails; 2 when it refused a flag's value. */
export async function callCommand(context: CliContext, command: CommandSpec): Promise<number> {
  const call = CALLS.find((candidate) => candidate.spec === command);
  if (call === undefined) throw new Error(`call has no command '${commandName(command)}'`);
  const send = call.plan(context.flags);
  const { flags } = context;
  const config = loadCallConfig(context.env, {
    baseUrl: flags['base-url'],
    username: flags.username,
    apiKey: flags['api-key'],
    sandbox: flags.sandbox,
    timeoutMs: flags['timeout-ms'],
    retries: flags.retries,
  });
  if (call.needsCredentials && config.credentials === null) {
    throw new UsageError(
      `'${commandName(command)}' needs credentials: give --username NAME and --api-key KEY, or set ACCOUNT_API_USERNAME and ACCOUNT_API_KEY`,
    );
  }
  let answer: Answer;
  try {
    answer = await send(clientFor(config));
  } catch (error) {
    if (!(error instanceof AccountApiError)) throw error;
    reportApiError(error, context);
    return refusesCommandLine(error, call, flags) ? 2 : 1;
  }
  if (flags.json) printJson(context, answer.envelope);
  else for (const line of answer.lines) printLine(context, line);
  if (!flags.json && answer.lines.length === 0 && flags.search !== undefined) {
    context.stderr.write(`account-api: no timezone name contains '${terminalText(flags.search)}'.\n`);
  }
  return 0;
}
