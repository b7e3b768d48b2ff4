// Test support for the admin API: a real `serve` with ADMIN_PORT, an admin token from the real CLI, on each engine.
import assert from 'node:assert/strict';
import { call, failureMessage, type CallOptions, type CallResult } from '../../support/http.ts';
import { createTestDatabase, postgresSkipReason, type TestDatabase } from '../../support/postgres.ts';
import { requiring, type Suite } from '../../support/requiring.ts';
import { cliOk, createWorkspace, startServer, type ServerProcess, type Workspace } from '../../support/server-process.ts';

export interface AdminServer {
  readonly workspace: Workspace;
  readonly server: ServerProcess;
  /** `http://127.0.0.1:PORT/admin/v0` */
  readonly admin: string;
  /** A fresh admin token made by `admin-tokens create`. */
  readonly token: string;
  /** One call to the admin API with the token (or other credentials given in options.auth). */
  call(method: string, path: string, options?: CallOptions): Promise<CallResult>;
  stop(): Promise<void>;
}

export function bearer(token: string): string {
  return `Bearer ${token}`;
}

/** Where the server said the admin API answers, from its start-up lines. */
export function adminUrlOf(server: ServerProcess): string {
  const line = server.output.find((each) => each.startsWith('admin API at '));
  assert.ok(line !== undefined, `the server did not say where the admin API is:\n${server.output.join('\n')}`);
  return line.split(' ')[3]!;
}

export async function makeAdminToken(workspace: Workspace, label = 'tests'): Promise<string> {
  return (await cliOk(workspace, ['admin-tokens', 'create', '--label', label])).trim();
}

export async function startAdminServer(database: TestDatabase | null, env: NodeJS.ProcessEnv = {}): Promise<AdminServer> {
  const workspace = createWorkspace({ ...(database === null ? {} : { DATABASE_URL: database.url }), ADMIN_PORT: '0', ...env });
  const token = await makeAdminToken(workspace);
  const server = await startServer(workspace);
  const admin = adminUrlOf(server);
  return {
    workspace,
    server,
    admin,
    token,
    call: (method, path, options = {}) => call(method, `${admin}${path}`, { auth: bearer(token), ...options }),
    stop: async () => {
      await server.stop();
      workspace.cleanup();
    },
  };
}

export interface Engine {
  readonly name: 'SQLite' | 'PostgreSQL';
  readonly suite: Suite;
  /** A fresh database for the engine (null: SQLite's file in the workspace); dropped by the returned cleanup. */
  database(): Promise<{ database: TestDatabase | null; drop(): Promise<void> }>;
}

const postgresSkip = await postgresSkipReason();

/** Every engine the admin API must work on: SQLite always, PostgreSQL when it answers (skipped, and said so, otherwise). */
export const ENGINES: readonly Engine[] = [
  { name: 'SQLite', suite: requiring(undefined), database: async () => ({ database: null, drop: async () => {} }) },
  {
    name: 'PostgreSQL',
    suite: requiring(postgresSkip),
    database: async () => {
      const database = await createTestDatabase();
      return { database, drop: () => database.drop() };
    },
  },
];

/** Runs `define` once per engine, with a server started before its tests and stopped after them. */
export function onEveryEngine(title: string, define: (context: { suite: Suite; admin: () => AdminServer }) => void, env: NodeJS.ProcessEnv = {}): void {
  for (const engine of ENGINES) {
    const { describe, before, after } = engine.suite;
    describe(`${title} (${engine.name})`, () => {
      let server: AdminServer;
      let drop: () => Promise<void> = async () => {};
      before(async () => {
        const made = await engine.database();
        drop = made.drop;
        server = await startAdminServer(made.database, env);
      });
      after(async () => {
        await server?.stop();
        await drop();
      });
      define({ suite: engine.suite, admin: () => server });
    });
  }
}

/** The failure's status and code, with the whole answer in the message when they are not what was expected. */
export function expectFailure(result: CallResult, status: number, code: string): { code: string; message: string; field?: string } {
  assert.equal(result.status, status, `expected ${status} ${code}, got ${result.status}: ${result.text}`);
  const message = failureMessage(result);
  assert.equal(message.code, code, `expected ${code}: ${result.text}`);
  return message;
}

/** The success envelope's data, failing with the whole answer otherwise. */
export function expectData(result: CallResult, status = 200): any {
  assert.equal(result.status, status, `expected ${status}, got ${result.status}: ${result.text}`);
  assert.equal(result.body?.status, 'success', result.text);
  return result.body.data;
}
