// The cost of PG_POOLER=transaction's `SET LOCAL statement_timeout` in each BEGIN: PostgreSQL backend CPU per transaction of one
// SELECT, with and without it, on a direct connection (`npx node scripts/set-local-cost.ts [postgres://...]`).
import { readFileSync } from 'node:fs';
import { PostgresEngine } from '../src/store/postgres/postgres-engine.ts';

const url = process.argv[2] ?? 'postgres://root@127.0.0.1:5432/test';
const ROUNDS = 20_000;
const ticks = (pid: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ').slice(11, 13).reduce((sum, field) => sum + Number(field), 0);

for (const pooler of ['none', 'transaction', 'none', 'transaction'] as const) {
  const engine = new PostgresEngine({ url, poolMax: 1, connectTimeoutMs: 5000, statementTimeoutMs: 5000, pooler });
  const pid = Number((await engine.one('SELECT pg_backend_pid() AS pid'))?.pid);
  for (let i = 0; i < 2000; i += 1) await engine.transaction((query) => query('SELECT 1'));
  const before = ticks(pid);
  const started = process.hrtime.bigint();
  for (let i = 0; i < ROUNDS; i += 1) await engine.transaction((query) => query('SELECT 1'));
  const wallUs = Number(process.hrtime.bigint() - started) / 1000 / ROUNDS;
  const backendUs = ((ticks(pid) - before) * 10_000) / ROUNDS; // 100 ticks a second
  console.log(`BEGIN${pooler === 'transaction' ? '; SET LOCAL statement_timeout' : ''}: backend ${backendUs.toFixed(1)} µs, wall ${wallUs.toFixed(1)} µs per transaction`);
  await engine.close();
}
