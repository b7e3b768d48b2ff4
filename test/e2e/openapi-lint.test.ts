// Spectral (spectral:oas and the OWASP API security ruleset) and Redocly (recommended) find nothing to say about the documents
// the servers serve: the live and the sandbox API's, and the admin API's.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { call } from '../support/http.ts';
import { createWorkspace, REPO_ROOT, startServer, type ServerProcess, type Workspace } from '../support/server-process.ts';
import { adminUrlOf } from './admin/admin-support.ts';

/** A package's command-line entry, from its own package.json, run with this Node (the project's pinned one). */
function binOf(packageName: string, command: string): string {
  const directory = join(REPO_ROOT, 'node_modules', packageName);
  const { bin } = JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as { bin: Record<string, string> };
  assert.ok(bin[command], `${packageName} has no '${command}' command`);
  return join(directory, bin[command]);
}

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a linter with nothing inherited but PATH: no network to reach, and a home of its own for anything it writes. */
function lint(bin: string, args: readonly string[], home: string): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, HOME: home, NO_COLOR: '1', REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

let workspace: Workspace;
let servers: ServerProcess[] = [];
let documents: string[] = [];

before(async () => {
  workspace = createWorkspace({ LOG_LEVEL: 'warn' });
  // The live server with its admin listener, and the sandbox. SANDBOX_URL, so that the live document lists a second server,
  // linted too (redocly.yaml switches nothing off: a sandbox at localhost would be flagged, as a placeholder left in would be).
  servers = await Promise.all([
    startServer(workspace, [], { ADMIN_PORT: '0', SANDBOX_URL: 'http://127.0.0.1:9999' }),
    startServer(workspace, ['--sandbox']),
  ]);
  const served = [
    ['live', `${servers[0]!.api}/openapi.json`],
    ['sandbox', `${servers[1]!.api}/openapi.json`],
    ['admin', `${adminUrlOf(servers[0]!)}/openapi.json`],
  ] as const;
  documents = await Promise.all(
    served.map(async ([name, url]) => {
      const response = await call('GET', url);
      assert.equal(response.status, 200, `GET ${url} answered ${response.status}`);
      const file = join(workspace.dir, `${name}.json`);
      writeFileSync(file, response.text);
      return file;
    }),
  );
});

after(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  workspace.cleanup();
});

test('Spectral (spectral:oas and the OWASP API security ruleset, as .spectral.yaml sets them) reports nothing on any of the three documents', async () => {
  // The admin document by its own ruleset (.spectral-admin.yaml: the same, less the CORS header its listener never sends).
  const [live, sandbox, admin] = documents;
  for (const [ruleset, files] of [['.spectral.yaml', [live!, sandbox!]], ['.spectral-admin.yaml', [admin!]]] as const) {
    const run = await lint(
      binOf('@stoplight/spectral-cli', 'spectral'),
      ['lint', '--ruleset', join(REPO_ROOT, ruleset), '--fail-severity', 'hint', '--format', 'stylish', ...files],
      workspace.dir,
    );
    const output = `${run.stdout}${run.stderr}`.trim();
    console.log(`spectral (${ruleset}): ${output}`);
    assert.equal(run.code, 0, `Spectral found something with ${ruleset} (exit ${run.code}):\n${output}`);
    assert.match(output, /No results with a severity of 'hint' or higher found!/);
  }
});

test('Redocly (recommended) reports no error and no warning on any of the three documents', async () => {
  // One run per document: with --format json Redocly prints one report per file, back to back.
  for (const document of documents) {
    const run = await lint(binOf('@redocly/cli', 'redocly'), ['lint', '--config', join(REPO_ROOT, 'redocly.yaml'), '--format', 'json', document], workspace.dir);
    let report: { totals: { errors: number; warnings: number; ignored: number }; problems: unknown[] };
    try {
      report = JSON.parse(run.stdout);
    } catch {
      assert.fail(`Redocly printed no JSON report for ${document} (exit ${run.code}):\n${run.stdout}${run.stderr}`);
    }
    console.log(`redocly: ${document}: ${JSON.stringify(report.totals)}`);
    assert.deepEqual(report.totals, { errors: 0, warnings: 0, ignored: 0 }, `Redocly found in ${document}:\n${JSON.stringify(report.problems, null, 2)}`);
    assert.equal(run.code, 0, `Redocly exited ${run.code}:\n${run.stderr}`);
  }
});
