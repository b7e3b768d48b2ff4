// Drives one server with one call: first checks that it answers correctly, then measures it under load with autocannon.
import { request } from 'node:http';
import autocannon from 'autocannon';
import { basicAuthorization, type BenchAccounts, type BenchCall } from './calls.ts';

export interface LoadSettings {
  readonly connections: number;
  readonly durationSeconds: number;
  readonly warmupSeconds: number;
  /** Requests per run instead of a duration (the smoke run); null: run for durationSeconds. */
  readonly amount: number | null;
}

export interface Measurement {
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly responses: number;
}

/** What a server must be sent for a call, and the answers that count as correct under load. */
export interface RequestPlan {
  readonly call: BenchCall;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The bodies it answered during verification: under load, any other body is a wrong answer. */
  readonly answers: readonly string[];
  /** Raw headers of its first verified answer. */
  readonly rawHeaders: readonly string[];
}

interface Reply {
  readonly status: number;
  readonly body: string;
  readonly rawHeaders: readonly string[];
  readonly etag: string | undefined;
}

function send(url: string, method: string, headers: Readonly<Record<string, string>>, body?: string): Promise<Reply> {
  return new Promise((done, fail) => {
    const req = request(url, { method, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.once('end', () => {
        const etag = res.headers.etag;
        done({ status: res.statusCode ?? 0, body: text, rawHeaders: res.rawHeaders, etag });
      });
    });
    req.once('error', fail);
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer from ${method} ${url} within 10 s`)));
    req.end(body);
  });
}

/**
 * Sends the call once per body and checks status and body shape, and when `reference` is given (the answers of the
 * server verified first), that the bodies are the same bytes. Throws with what was wrong, so a broken server cannot win.
 */
export async function verify(baseUrl: string, call: BenchCall, accounts: BenchAccounts, reference: readonly string[] | null): Promise<RequestPlan> {
  const account = accounts[call.account];
  const url = `${baseUrl}/api/v0${call.path}`;
  const headers: Record<string, string> = {};
  if (call.authenticated) headers.authorization = basicAuthorization(account);
  if (call.method === 'POST') headers['content-type'] = 'application/x-www-form-urlencoded';
  if (call.conditional) {
    const list = await send(url, 'GET', headers);
    if (list.etag === undefined) throw new Error(`GET ${call.path} answered ${list.status} without an ETag`);
    headers['if-none-match'] = list.etag;
  }
  const sent = call.bodies.length === 0 ? [undefined] : call.bodies;
  const answers: string[] = [];
  let rawHeaders: readonly string[] = [];
  for (const [index, body] of sent.entries()) {
    const reply = await send(url, call.method, headers, body);
    const what = `${call.label}${body === undefined ? '' : ` with ${body}`}`;
    if (reply.status !== call.expectedStatus) {
      throw new Error(`${what} answered ${reply.status}, expected ${call.expectedStatus}: ${reply.body.slice(0, 300)}`);
    }
    const problem = call.shapeProblem(reply.body, account, index);
    if (problem !== null) throw new Error(`${what}: ${problem}`);
    const expected = reference?.[index];
    if (expected !== undefined && expected !== reply.body) {
      throw new Error(`${what}: the body differs from the service's\n  service: ${expected.slice(0, 200)}\n  this:    ${reply.body.slice(0, 200)}`);
    }
    answers.push(reply.body);
    if (index === 0) rawHeaders = reply.rawHeaders;
  }
  return { call, url, headers, answers, rawHeaders };
}

function percentile(sorted: Float64Array, fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))]!;
}

/** The promise autocannon returns is also its tracker; its typings give `response` listeners the wrong arguments. */
interface ResponseEvents {
  on(event: 'response', listener: (client: unknown, status: number, bytes: number, responseTime: number) => void): unknown;
}

function run(plan: RequestPlan, settings: LoadSettings, durationSeconds: number, onResponse?: (status: number, ms: number) => void) {
  const allowed = new Set(plan.answers);
  const instance = autocannon({
    url: plan.url,
    method: plan.call.method,
    headers: { ...plan.headers },
    connections: settings.connections,
    pipelining: 1,
    duration: durationSeconds,
    ...(settings.amount === null ? {} : { amount: Math.max(settings.amount, settings.connections) }),
    ...(plan.call.bodies.length === 0 ? {} : { requests: plan.call.bodies.map((body) => ({ method: plan.call.method, body })) }),
    verifyBody: (body) => allowed.has(String(body)),
    timeout: 10,
    // autocannon ends a run at its next sample tick: 100 ms keeps runs within 0.1 s of their length (and smoke runs short).
    sampleInt: 100,
  }) as Promise<autocannon.Result> & ResponseEvents;
  // autocannon's own histogram keeps whole milliseconds; these answers take less than one, so latencies are kept here.
  if (onResponse !== undefined) {
    instance.on('response', (_client: unknown, status: number, _bytes: number, responseTime: number) => onResponse(status, responseTime));
  }
  return instance;
}

/** Warms the server up, then measures; throws when any answer under load was wrong, failed or timed out. */
export async function measure(plan: RequestPlan, settings: LoadSettings): Promise<Measurement> {
  if (settings.warmupSeconds > 0 && settings.amount === null) await run(plan, settings, settings.warmupSeconds);
  let latencies = new Float64Array(1 << 16);
  let count = 0;
  let wrongStatus = 0;
  const result = await run(plan, settings, settings.durationSeconds, (status, ms) => {
    if (status !== plan.call.expectedStatus) wrongStatus++;
    if (count === latencies.length) {
      const grown = new Float64Array(latencies.length * 2);
      grown.set(latencies);
      latencies = grown;
    }
    latencies[count++] = ms;
  });
  const failures = [
    wrongStatus > 0 ? `${wrongStatus} answers with another status than ${plan.call.expectedStatus}` : '',
    result.mismatches > 0 ? `${result.mismatches} answers with a wrong body` : '',
    result.errors > 0 ? `${result.errors} connection errors` : '',
    result.timeouts > 0 ? `${result.timeouts} timeouts` : '',
  ].filter((text) => text !== '');
  if (failures.length > 0) throw new Error(`${plan.call.label} under load: ${failures.join(', ')}`);
  const sorted = latencies.subarray(0, count).sort();
  return {
    requestsPerSecond: count / result.duration,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    responses: count,
  };
}
