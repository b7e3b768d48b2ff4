// Runs wrk (Debian's package) against one server with one request, and reads what it measured from the Lua script's done().
//
// wrk is C with a LuaJIT script per thread: it spends a few microseconds of CPU per answer where autocannon, in the bench's own
// Node process, spent tens, so on a 2-core machine the server under test is the one that runs out of CPU. The script sends
// the request (the POSTs alternate between their bodies), checks every answer's status and body against those the server gave
// when it was verified, and prints the counts, latency percentiles and wrk's own CPU time as one line the bench parses.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';

export interface WrkLoad {
  readonly url: string;
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Sent in turn, one per request; empty: no body. */
  readonly bodies: readonly string[];
  readonly expectedStatus: number;
  /** Every answer's body must be one of these; null: bodies are not checked (the warm-up). */
  readonly allowedBodies: readonly string[] | null;
  /** Or match this Lua pattern, for calls whose answers are too many to list (keys spread over many accounts). */
  readonly bodyPattern?: string;
  /**
   * Authorization header values, one a line, sent in turn from line `first` (then round again), each request with the next:
   * load spread over many accounts. Only for calls without a body.
   */
  readonly authorizations?: { readonly file: string; readonly first: number };
}

export interface WrkRun {
  readonly connections: number;
  readonly threads: number;
  /** Whole seconds go to wrk's -d; a fraction (the smoke run) is ended with SIGINT, which wrk takes as "stop and report". */
  readonly durationSeconds: number;
}

export interface WrkResult {
  readonly requests: number;
  readonly durationSeconds: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly errors: { readonly connect: number; readonly read: number; readonly write: number; readonly status: number; readonly timeout: number };
  /** Answers with another status or a body not among the allowed ones. */
  readonly wrong: number;
  readonly firstWrong: string | null;
  /** wrk's own user + system time over the run, in seconds (from its /proc/self/stat, ticks). */
  readonly cpuSeconds: number;
}

const RESULT_MARK = 'BENCH-WRK-RESULT';
const WRONG_MARK = 'BENCH-WRK-FIRST-WRONG';
const STARTED_MARK = 'BENCH-WRK-STARTED';

/** A Lua string literal of the exact bytes of `text` (UTF-8): printable ASCII as is, everything else as a decimal escape. */
export function luaString(text: string): string {
  let literal = '"';
  for (const byte of Buffer.from(text, 'utf8')) {
    if (byte === 0x22 || byte === 0x5c) literal += `\\${String.fromCharCode(byte)}`;
    else if (byte >= 0x20 && byte < 0x7f) literal += String.fromCharCode(byte);
    else literal += `\\${String(byte).padStart(3, '0')}`;
  }
  return `${literal}"`;
}

/** The Lua script wrk runs for `load`. */
export function wrkScript(load: WrkLoad, label: string): string {
  const url = new URL(load.url);
  const headers = Object.entries(load.headers).map(([name, value]) => `[${luaString(name)}] = ${luaString(value)}`);
  const bodies = load.bodies.map(luaString);
  const allowed = (load.allowedBodies ?? []).map((body) => `[${luaString(body)}] = true`);
  if (load.authorizations !== undefined && load.bodies.length > 0) throw new Error('wrk: authorizations from a file are for calls without a body');
  return `-- Written by bench/wrk.ts for ${label.replace(/\n/g, ' ')}.
local method = ${luaString(load.method)}
local path = ${luaString(url.pathname + url.search)}
local headers = { ${headers.join(', ')} }
local bodies = { ${bodies.join(', ')} }
local allowed = { ${allowed.join(', ')} }
local expected_status = ${load.expectedStatus}
local check = ${load.allowedBodies === null ? 'false' : 'true'}
local pattern = ${load.bodyPattern === undefined ? 'nil' : luaString(load.bodyPattern)}
local authorizations_file = ${load.authorizations === undefined ? 'nil' : luaString(load.authorizations.file)}
local first_authorization = ${load.authorizations?.first ?? 0}

-- Globals, so that done() can read them from each thread.
wrong = 0
first_wrong = nil

wrk.method = method
wrk.path = path
wrk.headers = headers
if #bodies == 1 then wrk.body = bodies[1] end

local prepared = {}
local turn = 0
function init(args)
  io.stderr:write("${STARTED_MARK}\\n")
  for i, body in ipairs(bodies) do prepared[i] = wrk.format(method, path, headers, body) end
  if authorizations_file then
    -- The request up to its blank line, once; each request adds one Authorization line to it: a concatenation, no format.
    local head = string.sub(wrk.format(method, path, headers, nil), 1, -3)
    for line in io.lines(authorizations_file) do prepared[#prepared + 1] = line end
    turn = first_authorization % #prepared
    function request()
      turn = turn % #prepared + 1
      return head .. "Authorization: " .. prepared[turn] .. "\\r\\n\\r\\n"
    end
  end
  -- Without a response function wrk does not hand bodies to Lua at all (the warm-up).
  if not check then response = nil end
end

if #bodies > 1 then
  function request()
    turn = turn % #prepared + 1
    return prepared[turn]
  end
end

function response(status, response_headers, body)
  if status ~= expected_status or not (allowed[body] or (pattern and string.find(body, pattern))) then
    wrong = wrong + 1
    if first_wrong == nil then first_wrong = status .. " " .. string.sub(body, 1, 300) end
  end
end

local threads = {}
function setup(thread) table.insert(threads, thread) end

function done(summary, latency, requests)
  local wrongs, first = 0, nil
  for _, thread in ipairs(threads) do
    wrongs = wrongs + (thread:get("wrong") or 0)
    first = first or thread:get("first_wrong")
  end
  local file = io.open("/proc/self/stat")
  local stat = file:read("*a")
  file:close()
  local fields = {}
  for field in string.gmatch(string.match(stat, "%) (.*)"), "%S+") do fields[#fields + 1] = field end
  local e = summary.errors
  io.write(string.format("${RESULT_MARK} %d %d %.1f %.1f %d %d %d %d %d %d %s %s\\n", summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(99), e.connect, e.read, e.write, e.status, e.timeout, wrongs, fields[12], fields[13]))
  if first then io.write("${WRONG_MARK} " .. string.gsub(first, "%c", " ") .. "\\n") end
end
`;
}

/** The result line of done(), or why there is none. */
export function parseWrkOutput(output: string, ticksPerSecond: number): WrkResult {
  const line = output.split('\n').find((candidate) => candidate.startsWith(`${RESULT_MARK} `));
  if (line === undefined) throw new Error(`wrk printed no result:\n${output.slice(-2000)}`);
  const [requests, durationUs, p50Us, p99Us, connect, read, write, status, timeout, wrong, utime, stime] = line
    .slice(RESULT_MARK.length + 1)
    .trim()
    .split(/\s+/)
    .map(Number);
  const firstWrong = output
    .split('\n')
    .find((candidate) => candidate.startsWith(`${WRONG_MARK} `))
    ?.slice(WRONG_MARK.length + 1);
  return {
    requests: requests!,
    durationSeconds: durationUs! / 1e6,
    p50Ms: p50Us! / 1000,
    p99Ms: p99Us! / 1000,
    errors: { connect: connect!, read: read!, write: write!, status: status!, timeout: timeout! },
    wrong: wrong!,
    firstWrong: firstWrong ?? null,
    cpuSeconds: (utime! + stime!) / ticksPerSecond,
  };
}

/** Runs wrk with the script at `scriptPath` (written by writeWrkScript) and returns what it measured. */
export function runWrk(scriptPath: string, url: string, run: WrkRun, ticksPerSecond: number): Promise<WrkResult> {
  const seconds = Math.max(1, Math.ceil(run.durationSeconds));
  const args = ['-t', String(run.threads), '-c', String(run.connections), '-d', `${seconds}s`, '--timeout', '10s', '-s', scriptPath, url];
  const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let early: NodeJS.Timeout | null = null;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
    // Timed from the script's init(), as wrk's thread starts (stderr is not buffered; wrk's own "Running" line on stdout is):
    // on a busy machine wrk itself takes a while to start, and a run ended before it was under way would report nothing.
    if (early === null && run.durationSeconds < seconds && output.includes(STARTED_MARK)) {
      early = setTimeout(() => child.kill('SIGINT'), run.durationSeconds * 1000);
    }
  });
  return new Promise((done, fail) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      if (early !== null) clearTimeout(early);
      fail(error.code === 'ENOENT' ? new Error('wrk is not installed (Debian: apt-get install wrk); the bench measures with it') : error);
    });
    child.once('close', (code, signal) => {
      if (early !== null) clearTimeout(early);
      if (code !== 0) return fail(new Error(`wrk ${args.join(' ')} exited ${code ?? signal}:\n${output.slice(-2000)}`));
      try {
        done(parseWrkOutput(output, ticksPerSecond));
      } catch (error) {
        fail(error as Error);
      }
    });
  });
}

export function writeWrkScript(path: string, load: WrkLoad, label: string): string {
  writeFileSync(path, wrkScript(load, label));
  return path;
}
