// The calls the bench drives, with the status and body shape that make an answer correct and the issue's target for each.

// user-spread: GET /user over many accounts' keys, in table 3 only (bench/scale-out.ts).
export type CallId = 'hello' | 'hello-auth' | 'user' | 'settings' | 'timezones' | 'timezones-304' | 'post-settings' | 'post-user' | 'user-spread';

/** The issue's requests-per-second target for one call, as ratios measured in the same run. */
export interface Target {
  /** Service req/s over ceiling req/s must be at least this. */
  readonly ofCeiling: number | null;
  /** Service req/s over Express req/s must be at least this. */
  readonly ofExpress: number | null;
  /** How the target reads in the table. */
  readonly text: string;
}

/** The issue's CPU-per-answer target for one call, measured in the same run. */
export interface CpuTarget {
  /** Ceiling CPU µs per answer over the service's must be at least this. */
  readonly ofCeiling: number;
  /** The service must spend less CPU per answer than the plain Fastify peer. */
  readonly belowFastify: boolean;
  readonly text: string;
}

export interface BenchCall {
  readonly id: CallId;
  /** As the issue names it: `GET /user`. */
  readonly label: string;
  readonly method: 'GET' | 'POST';
  /** Below /api/v0. */
  readonly path: string;
  readonly authenticated: boolean;
  /**
   * Which bench account it uses. Each POST has one of its own, so no write ever changes what another call answers
   * (POST /settings would leave the timezone GET /user and POST /user show on whichever value came last).
   */
  readonly account: keyof BenchAccounts;
  /** Sends If-None-Match with the list's ETag. */
  readonly conditional: boolean;
  /** Form bodies sent in turn, so every write changes the row; empty for GET. */
  readonly bodies: readonly string[];
  readonly expectedStatus: number;
  /** Compared against the ceiling that writes the row with node:sqlite rather than the in-memory one. */
  readonly writes: boolean;
  readonly target: Target;
  /** null: no CPU target of its own (GET /hello with credentials is compared with GET /hello without: authentication's cost). */
  readonly cpuTarget: CpuTarget | null;
  /** Why `body` (the answer to `bodies[i]`, or to the GET) is not a correct answer; null when it is. */
  shapeProblem(body: string, account: BenchAccount, bodyIndex: number): string | null;
}

/** The account every authenticated call uses; the bench creates it, Premium, before anything starts. */
export interface BenchAccount {
  readonly userId: number;
  readonly username: string;
  readonly name: string;
  readonly timezone: string;
  readonly key: string;
}

export interface BenchAccounts {
  /** Only read. */
  readonly main: BenchAccount;
  /** Written by POST /settings. */
  readonly timezones: BenchAccount;
  /** Written by POST /user. */
  readonly names: BenchAccount;
}

export const NEW_NAMES = ['Bench Writer A', 'Bench Writer B'] as const;
export const NEW_TIMEZONES = ['Europe/Kyiv', 'America/Argentina/Buenos_Aires'] as const;

function parsed(body: string): { envelope: Record<string, unknown> } | { problem: string } {
  try {
    const envelope = JSON.parse(body) as unknown;
    if (typeof envelope !== 'object' || envelope === null || Array.isArray(envelope)) return { problem: 'the body is not a JSON object' };
    return { envelope: envelope as Record<string, unknown> };
  } catch {
    return { problem: `the body is not JSON: ${body.slice(0, 120)}` };
  }
}

/** The success envelope with exactly these keys in this order, and `data` passing `checkData`. */
function successShape(
  body: string,
  meta: Record<string, unknown>,
  checkData: (data: unknown) => string | null,
): string | null {
  const result = parsed(body);
  if ('problem' in result) return result.problem;
  const { envelope } = result;
  if (Object.keys(envelope).join(',') !== 'status,messages,meta,data') return `envelope keys are ${Object.keys(envelope).join(',')}`;
  if (envelope.status !== 'success') return `status is ${JSON.stringify(envelope.status)}`;
  if (!Array.isArray(envelope.messages) || envelope.messages.length !== 0) return 'messages is not []';
  if (JSON.stringify(envelope.meta) !== JSON.stringify(meta)) return `meta is ${JSON.stringify(envelope.meta)}`;
  return checkData(envelope.data);
}

function sameJson(expected: unknown): (data: unknown) => string | null {
  return (data) => (JSON.stringify(data) === JSON.stringify(expected) ? null : `data is ${JSON.stringify(data)}, expected ${JSON.stringify(expected)}`);
}

const GET_TARGET: Target = { ofCeiling: 0.85, ofExpress: null, text: '≥ 0.85 × ceiling' };
const PREMIUM_TARGET: Target = { ofCeiling: 0.85, ofExpress: 1.6, text: '≥ 0.85 × ceiling and ≥ 1.6 × Express' };
const WRITE_TARGET: Target = { ofCeiling: 0.6, ofExpress: null, text: '≥ 0.60 × ceiling writing with node:sqlite' };
const PREMIUM_CPU_TARGET: CpuTarget = { ofCeiling: 0.7, belowFastify: true, text: 'ceiling / service ≥ 0.70 and below Fastify' };
const TIMEZONES_DESCRIPTION = 'Data is a list of valid timezones.';

function timezoneList(data: unknown): string | null {
  if (!Array.isArray(data) || data.length < 300) return 'data is not the list of timezones';
  if (data.at(-1) !== 'UTC' || !data.includes('Europe/Paris')) return 'the list does not hold UTC last and Europe/Paris';
  return null;
}

export const BENCH_CALLS: readonly BenchCall[] = [
  {
    id: 'hello',
    label: 'GET /hello',
    method: 'GET',
    path: '/hello',
    authenticated: false,
    account: 'main',
    conditional: false,
    bodies: [],
    expectedStatus: 200,
    writes: false,
    target: GET_TARGET,
    cpuTarget: { ofCeiling: 0.85, belowFastify: false, text: 'ceiling / service ≥ 0.85' },
    shapeProblem: (body) => successShape(body, {}, sameJson({ name: 'World' })),
  },
  {
    id: 'hello-auth',
    label: 'GET /hello with credentials',
    method: 'GET',
    path: '/hello',
    authenticated: true,
    account: 'main',
    conditional: false,
    bodies: [],
    expectedStatus: 200,
    writes: false,
    target: GET_TARGET,
    cpuTarget: null,
    shapeProblem: (body, account) => successShape(body, {}, sameJson({ name: account.name })),
  },
  {
    id: 'user',
    label: 'GET /user',
    method: 'GET',
    path: '/user',
    authenticated: true,
    account: 'main',
    conditional: false,
    bodies: [],
    expectedStatus: 200,
    writes: false,
    target: PREMIUM_TARGET,
    cpuTarget: PREMIUM_CPU_TARGET,
    shapeProblem: (body, account) =>
      successShape(body, {}, sameJson({ user_id: account.userId, username: account.username, name: account.name, timezone: account.timezone })),
  },
  {
    id: 'settings',
    label: 'GET /settings',
    method: 'GET',
    path: '/settings',
    authenticated: true,
    account: 'main',
    conditional: false,
    bodies: [],
    expectedStatus: 200,
    writes: false,
    target: PREMIUM_TARGET,
    cpuTarget: PREMIUM_CPU_TARGET,
    shapeProblem: (body, account) => successShape(body, {}, sameJson({ timezone: account.timezone })),
  },
  {
    id: 'timezones',
    label: 'GET /settings/timezones (200)',
    method: 'GET',
    path: '/settings/timezones',
    authenticated: true,
    account: 'main',
    conditional: false,
    bodies: [],
    expectedStatus: 200,
    writes: false,
    target: GET_TARGET,
    cpuTarget: null,
    shapeProblem: (body) => successShape(body, { description: TIMEZONES_DESCRIPTION }, timezoneList),
  },
  {
    id: 'timezones-304',
    label: 'GET /settings/timezones (304)',
    method: 'GET',
    path: '/settings/timezones',
    authenticated: true,
    account: 'main',
    conditional: true,
    bodies: [],
    expectedStatus: 304,
    writes: false,
    target: GET_TARGET,
    cpuTarget: null,
    shapeProblem: (body) => (body === '' ? null : 'a 304 carries a body'),
  },
  {
    id: 'post-settings',
    label: 'POST /settings',
    method: 'POST',
    path: '/settings',
    authenticated: true,
    account: 'timezones',
    conditional: false,
    bodies: NEW_TIMEZONES.map((timezone) => new URLSearchParams({ timezone }).toString()),
    expectedStatus: 200,
    writes: true,
    target: WRITE_TARGET,
    cpuTarget: null,
    shapeProblem: (body, _account, index) => successShape(body, {}, sameJson({ timezone: NEW_TIMEZONES[index] })),
  },
  {
    id: 'post-user',
    label: 'POST /user',
    method: 'POST',
    path: '/user',
    authenticated: true,
    account: 'names',
    conditional: false,
    bodies: NEW_NAMES.map((name) => new URLSearchParams({ name }).toString()),
    expectedStatus: 200,
    writes: true,
    target: WRITE_TARGET,
    cpuTarget: null,
    shapeProblem: (body, account, index) =>
      successShape(body, {}, (data) => {
        const view = data as Record<string, unknown> | null;
        if (view === null || typeof view !== 'object') return 'data is not an object';
        if (Object.keys(view).join(',') !== 'user_id,username,name,timezone') return `data keys are ${Object.keys(view).join(',')}`;
        if (view.user_id !== account.userId || view.username !== account.username) return 'data names another account';
        return view.name === NEW_NAMES[index] ? null : `data.name is ${JSON.stringify(view.name)}`;
      }),
  },
];

export function basicAuthorization(account: BenchAccount): string {
  return `Basic ${Buffer.from(`${account.username}:${account.key}`).toString('base64')}`;
}
