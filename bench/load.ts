// Drives one server with one call: first checks that it answers correctly, then measures it under a fixed wrk load, with the
// server's own CPU time read before and after.
import { request } from 'node:http';
import { join } from 'node:path';
import { basicAuthorization, type BenchAccounts, type BenchCall } from './calls.ts';
import { clockTicksPerSecond, cpuBetween, readCpu } from './cpu-time.ts';
import type { Measurement, Meter, ScaleOutFigures } from './measurement.ts';
import { runWrk, writeWrkScript, type WrkLoad, type WrkResult } from './wrk.ts';

export interface LoadSettings {
  readonly connections: number;
  /** May be a fraction of a second (the smoke run). */
  readonly durationSeconds: number;
  readonly warmupSeconds: number;
  /** wrk's threads (-t): one keeps up with any of these servers on this machine and leaves the other core to the server. */
  readonly loadThreads: number;
}

/** The load of a run's options: what every table and the at-size mode give wrk. */
export function loadSettingsOf(options: LoadSettings): LoadSettings {
  return { connections: options.connections, durationSeconds: options.durationSeconds, warmupSeconds: options.warmupSeconds, loadThreads: options.loadThreads };
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
  /** Load over many accounts: their Authorization values from a file, and the pattern their answers must match. */
  readonly spread?: SpreadLoad;
}

export interface SpreadLoad {
  /** Authorization header values, one a line. */
  readonly file: string;
  /** The line the next wrk run starts from: each run goes on where the last stopped, so no key is reused early. */
  readonly cursor: { next: number };
  /** A Lua pattern every answer's body must match. */
  readonly bodyPattern: string;
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

function wrkLoad(plan: RequestPlan, checked: boolean): WrkLoad {
  return {
    url: plan.url,
    method: plan.call.method,
    headers: plan.headers,
    bodies: plan.call.bodies,
    expectedStatus: plan.call.expectedStatus,
    allowedBodies: checked ? plan.answers : null,
    ...(plan.spread === undefined
      ? {}
      : { authorizations: { file: plan.spread.file, first: plan.spread.cursor.next }, ...(checked ? { bodyPattern: plan.spread.bodyPattern } : {}) }),
  };
}

function problems(result: WrkResult, plan: RequestPlan): string[] {
  const { errors } = result;
  return [
    result.wrong > 0 ? `${result.wrong} wrong answers (first: ${result.firstWrong ?? '?'})` : '',
    errors.status > 0 ? `${errors.status} answers with a status of 400 or more` : '',
    errors.connect + errors.read + errors.write > 0 ? `${errors.connect + errors.read + errors.write} connection errors` : '',
    errors.timeout > 0 ? `${errors.timeout} timeouts` : '',
    result.requests === 0 ? `no answer at all to ${plan.call.label}` : '',
  ].filter((text) => text !== '');
}

/**
 * Warms the server up, then measures: wrk for a fixed time, with the server's CPU time (`pid` and its descendants) read just
 * before and just after. Throws when any answer under load was wrong, failed or timed out, so a broken server cannot win.
 * `scriptDir` receives wrk's Lua script.
 */
export async function measure(
  plan: RequestPlan,
  settings: LoadSettings,
  pid: number,
  scriptDir: string,
  name: string,
  meter?: Meter<ScaleOutFigures>,
): Promise<Measurement> {
  const ticks = clockTicksPerSecond();
  const label = `${name} ${plan.call.label}`;
  const script = (checked: boolean) =>
    writeWrkScript(join(scriptDir, `${name.replace(/\W+/g, '-')}-${plan.call.id}${checked ? '' : '-warmup'}.lua`), wrkLoad(plan, checked), label);
  const run = (durationSeconds: number) => ({ connections: settings.connections, threads: settings.loadThreads, durationSeconds });
  // Past every request of the run (and those in flight when it stopped), so the next run starts on keys not used yet.
  const advance = (result: WrkResult) => {
    if (plan.spread !== undefined) plan.spread.cursor.next += result.requests + settings.connections;
  };
  if (settings.warmupSeconds > 0) {
    const warmup = await runWrk(script(false), plan.url, run(settings.warmupSeconds), ticks);
    advance(warmup);
    const failures = problems(warmup, plan);
    if (failures.length > 0) throw new Error(`${plan.call.label} during the warm-up: ${failures.join(', ')}`);
  }
  await meter?.begin();
  const checkedScript = script(true);
  const before = readCpu(pid);
  const result = await runWrk(checkedScript, plan.url, run(settings.durationSeconds), ticks);
  const after = readCpu(pid);
  advance(result);
  const failures = problems(result, plan);
  if (failures.length > 0) throw new Error(`${plan.call.label} under load: ${failures.join(', ')}`);
  const cpu = cpuBetween(before, after);
  const scaleOut = await meter?.end(result.requests, result.durationSeconds);
  return {
    requestsPerSecond: result.requests / result.durationSeconds,
    p50Ms: result.p50Ms,
    p99Ms: result.p99Ms,
    responses: result.requests,
    cpuMicrosPerAnswer: cpu.ns / 1000 / result.requests,
    cpuSource: cpu.source,
    systemShare: cpu.systemShare,
    serverCores: cpu.ns / 1e9 / result.durationSeconds,
    loadGeneratorCores: result.cpuSeconds / result.durationSeconds,
    ...(scaleOut === undefined ? {} : { scaleOut }),
  };
}
