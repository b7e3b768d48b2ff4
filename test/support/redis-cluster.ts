// Test support: a Redis Cluster of the test's own (three masters, one replica each) on free local ports, torn down on exit.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Cluster, Redis } from 'ioredis';
import { trackChild } from './child-processes.ts';
import { HANG_MS } from './eventually.ts';
import { redisSkipReason, TEST_REDIS_URL } from './redis.ts';

const run = promisify(execFile);

/** Small, so that a master's failure is noticed and its replica promoted quickly (the tests wait for it, never time it). */
export const CLUSTER_NODE_TIMEOUT_MS = 1000;

/** Undefined when redis-server and redis-cli are here; otherwise why the tests skip. In CI a missing one is a failure. */
export async function redisClusterSkipReason(): Promise<string | undefined> {
  try {
    await run('redis-server', ['--version']);
    await run('redis-cli', ['--version']);
    return undefined;
  } catch (error) {
    const reason = `redis-server or redis-cli is not installed (${(error as Error).message.split('\n')[0]}); install Redis (see docs/deploy.md) to run the Redis Cluster tests`;
    if (process.env.CI) throw new Error(`${reason}. CI must run them.`);
    return reason;
  }
}

export interface ClusterNode {
  readonly port: number;
  /** `host:port`, as REDIS_CLUSTER_NODES lists it. */
  readonly address: string;
  /** Running (false once killed). */
  readonly alive: boolean;
}

export interface PrivateRedisCluster {
  readonly nodes: readonly ClusterNode[];
  /** REDIS_CLUSTER_NODES for the service: every master and replica as a seed. */
  readonly seeds: string;
  /** The node serving `slot` as master now, by CLUSTER SLOTS on a live node. */
  masterOf(slot: number): Promise<ClusterNode>;
  /** The replica following `master`, by ROLE on each live node. */
  replicaOf(master: ClusterNode): Promise<ClusterNode>;
  /** SIGKILL, as a crash would; its replica takes over once the others agree it failed (CLUSTER_NODE_TIMEOUT_MS). */
  kill(node: ClusterNode): Promise<void>;
  /** SIGSTOP: it neither answers nor replicates (nor, for a replica, promotes itself) until resumed. */
  pause(node: ClusterNode): void;
  /** SIGCONT. */
  resume(node: ClusterNode): void;
  /** Resolves once every live node (but those `aside`, e.g. paused) says cluster_state:ok and `slot` is served by one of them. */
  waitUntilServed(slot?: number, aside?: readonly ClusterNode[]): Promise<void>;
  /** A client of the test's own, for reading what the service wrote. */
  client(): Cluster;
  cleanup(): Promise<void>;
}

interface Member {
  readonly port: number;
  readonly child: ChildProcess;
  readonly address: string;
  alive: boolean;
}

async function clusterInfo(port: number): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'CLUSTER', 'INFO']);
  return stdout;
}

/** One command on one node, over a connection of its own. */
export async function nodeCommand(port: number, ...args: [string, ...(string | number)[]]): Promise<unknown> {
  const redis = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => {});
  try {
    await redis.connect();
    return await redis.call(...args);
  } finally {
    redis.disconnect();
  }
}

async function slotsMap(port: number): Promise<Array<[number, number, number]>> {
  const ranges = (await nodeCommand(port, 'CLUSTER', 'SLOTS')) as Array<[number, number, [string, number, string]]>;
  return ranges.map(([from, to, [, masterPort]]) => [from, to, masterPort]);
}

async function pause(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

/** `count` distinct free ports, held open together so that none is handed out twice. */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: count }, () => new Promise<Server>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve(server));
    })),
  );
  const ports = servers.map((server) => (server.address() as AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

/** Six redis-server processes joined as a cluster; another set of ports if one was taken meanwhile (a node exits at once). */
export async function privateRedisCluster(): Promise<PrivateRedisCluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startCluster();
    } catch (error) {
      if (!(error instanceof PortTaken) || attempt === 3) throw error;
    }
  }
}

class PortTaken extends Error {}

/** Six redis-server processes in cluster mode, joined by `redis-cli --cluster create` with one replica per master. */
async function startCluster(): Promise<PrivateRedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'account-api-redis-cluster-'));
  const members: Member[] = [];
  const running = (member: Member) => member.child.exitCode === null && member.child.signalCode === null;
  const stopAll = () => {
    for (const member of members) if (running(member)) member.child.kill('SIGKILL');
  };
  // A test process that dies without its after hook must not leave six servers behind.
  process.once('exit', stopAll);
  try {
    // The cluster bus port is named too: port + 10000, the default, may be past 65535 for an ephemeral port.
    const ports = await freePorts(12);
    for (let i = 0; i < 6; i++) {
      const [port, busPort] = [ports[2 * i]!, ports[2 * i + 1]!];
      const child = spawn(
        'redis-server',
        [
          '--port', String(port), '--cluster-port', String(busPort), '--bind', '127.0.0.1', '--dir', dir,
          '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`,
          '--cluster-node-timeout', String(CLUSTER_NODE_TIMEOUT_MS), '--save', '', '--appendonly', 'no',
          // A replica promotes itself however long it was cut off: these tests kill masters on purpose.
          '--cluster-replica-validity-factor', '0',
        ],
        { stdio: 'ignore' },
      );
      trackChild(child, ['redis-server', '--port', String(port), '--cluster-enabled', 'yes'], 'file');
      members.push({ port, child, address: `127.0.0.1:${port}`, alive: true });
    }
    for (const member of members) {
      await waitUntil(`redis-server on port ${member.port} answering`, async () => {
        // Exited at once: its port (or bus port) was taken by another process since freePorts looked.
        if (!running(member)) throw new PortTaken(`redis-server on port ${member.port} exited with ${member.child.exitCode}`);
        return (await clusterInfo(member.port)).includes('cluster_state');
      });
    }
    await run('redis-cli', ['--cluster', 'create', ...members.map((member) => member.address), '--cluster-replicas', '1', '--cluster-yes']);
  } catch (error) {
    stopAll();
    process.removeListener('exit', stopAll);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }

  const live = () => members.filter((member) => member.alive);
  const handle: PrivateRedisCluster = {
    nodes: members,
    seeds: members.map((member) => member.address).join(','),
    async masterOf(slot) {
      const ranges = await slotsMap(live()[0]!.port);
      const range = ranges.find(([from, to]) => slot >= from && slot <= to);
      const member = members.find((candidate) => candidate.port === range?.[2]);
      if (member === undefined) throw new Error(`no master serves slot ${slot}: ${JSON.stringify(ranges)}`);
      return member;
    },
    async replicaOf(master) {
      for (const member of live()) {
        const role = (await nodeCommand(member.port, 'ROLE')) as [string, string, number];
        if (role[0] === 'slave' && role[2] === master.port) return member;
      }
      throw new Error(`no live replica follows ${master.address}`);
    },
    pause(node) {
      members.find((candidate) => candidate.port === node.port)!.child.kill('SIGSTOP');
    },
    resume(node) {
      members.find((candidate) => candidate.port === node.port)!.child.kill('SIGCONT');
    },
    async kill(node) {
      const member = members.find((candidate) => candidate.port === node.port)!;
      if (!member.alive) return;
      const exited = new Promise((resolve) => member.child.once('exit', resolve));
      member.alive = false;
      member.child.kill('SIGKILL');
      await exited;
    },
    async waitUntilServed(slot, aside = []) {
      const answering = () => live().filter((member) => !aside.some((node) => node.port === member.port));
      for (const member of answering()) await waitUntil(`node ${member.port} cluster_state:ok`, async () => (await clusterInfo(member.port)).includes('cluster_state:ok'));
      if (slot === undefined) return;
      // Every answering node must agree, or a client refreshing its map from a laggard would still be sent to the lost one.
      await waitUntil(`slot ${slot} served by an answering master, by every answering node's account`, async () => {
        for (const member of answering()) {
          const range = (await slotsMap(member.port)).find(([from, to]) => slot >= from && slot <= to);
          if (range === undefined || !answering().some((candidate) => candidate.port === range[2])) return false;
        }
        return true;
      });
    },
    client() {
      return new Cluster(members.filter((member) => member.alive).map((member) => ({ host: '127.0.0.1', port: member.port })));
    },
    async cleanup() {
      const exits = members.filter(running).map((member) => new Promise((resolve) => member.child.once('exit', resolve)));
      stopAll();
      await Promise.all(exits);
      process.removeListener('exit', stopAll);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await handle.waitUntilServed();
  return handle;
}

/** Polls until `check` holds; the bound is a hang detector, not a timing check. */
async function waitUntil(what: string, check: () => Promise<boolean>): Promise<void> {
  const startedAt = Date.now();
  let last: unknown = null;
  while (Date.now() - startedAt < HANG_MS) {
    try {
      if (await check()) return;
    } catch (error) {
      if (error instanceof PortTaken) throw error;
      last = error;
    }
    await pause(50);
  }
  throw new Error(`${what}: not so after ${HANG_MS} ms, taken for a hang${last === null ? '' : ` (last error: ${(last as Error).message})`}`);
}

/** One way the service meets Redis, for suites that must hold on both: the environment it is given, and what to undo. */
export interface RedisUnderTest {
  readonly name: string;
  skipReason(): Promise<string | undefined>;
  start(): Promise<{ readonly env: NodeJS.ProcessEnv; cleanup(): Promise<void> }>;
}

export const REDIS_KINDS: readonly RedisUnderTest[] = [
  { name: 'one Redis', skipReason: redisSkipReason, start: async () => ({ env: { REDIS_URL: TEST_REDIS_URL }, cleanup: async () => {} }) },
  {
    name: 'a Redis Cluster',
    skipReason: redisClusterSkipReason,
    start: async () => {
      const cluster = await privateRedisCluster();
      return { env: { REDIS_CLUSTER_NODES: cluster.seeds }, cleanup: () => cluster.cleanup() };
    },
  },
];
