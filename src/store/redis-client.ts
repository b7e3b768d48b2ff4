// Connects to Redis or a Redis Cluster (shared budgets, credentials versions) so that an outage or a failover fails fast
// and heals by itself. Guarded by: test/e2e/redis.test.ts (one Redis), test/e2e/redis-cluster.test.ts (a cluster).
import type { Cluster, ClusterOptions, Redis, RedisOptions } from 'ioredis';
import type { RedisSettings } from '../config.ts';
import { closeWithin } from './bounded-close.ts';

/**
 * What the rest of the service holds: one Redis or a cluster. Both run the same commands and defineCommand scripts; on a
 * cluster each script must name keys of one slot (the account's hash tag), which test/unit/store/redis-scripts-slots.test.ts proves.
 */
export type RedisClient = Redis | Cluster;

export interface RedisLogger {
  warn(details: object, message: string): void;
}

/** How long start-up waits for Redis before serving anyway (answering 503 where Redis is needed until it comes). */
const READY_WAIT_MS = 3000;

/** Reconnect quickly and keep trying forever: recovery within a second of Redis's return. */
const reconnectDelay = (attempt: number) => Math.min(attempt * 100, 500);

/** Per connection, to one Redis or to each node of a cluster. */
const CONNECTION_OPTIONS = {
  maxRetriesPerRequest: 1,
  connectTimeout: 2000,
} satisfies RedisOptions;

export async function openRedis(settings: RedisSettings, log: RedisLogger): Promise<RedisClient> {
  // Loaded only when Redis is configured: ioredis adds memory to every process and time to every start that does not use it.
  const { Redis, Cluster } = await import('ioredis');
  const { target } = settings;
  const redis: RedisClient = target.cluster
    ? new Cluster(target.nodes.map(seedNode), clusterOptions(target.nodes[0]!))
    : new Redis(target.url, {
        ...CONNECTION_OPTIONS,
        // Commands fail at once while disconnected instead of queueing: a caller gets 503 now, not a hang.
        enableOfflineQueue: false,
        // Commands issued in the same event-loop turn leave in one write: under load many requests' scripts share a round trip,
        // and a cold read's refund and charge travel together. Figures: docs/operations.md (the credential lookup).
        enableAutoPipelining: true,
        retryStrategy: reconnectDelay,
      });
  let lastWarning = 0;
  redis.on('error', (error: Error) => {
    // One line a second at most while Redis is down, not one per reconnect attempt.
    const now = Date.now();
    if (now - lastWarning < 1000) return;
    lastWarning = now;
    log.warn({ err: { message: error.message } }, 'redis unavailable');
  });
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, READY_WAIT_MS);
    redis.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  return redis;
}

/**
 * QUIT, then disconnect if it has not answered within the grace: a cluster client whose QUIT never completes (a node paused
 * mid-close) otherwise keeps its refresh timer, and the process, alive for ever (issue 36: a CLI command sat 19 minutes).
 */
export async function closeRedis(redis: Pick<RedisClient, 'quit' | 'disconnect'>, graceMs?: number): Promise<void> {
  await closeWithin(
    () => redis.quit(),
    () => redis.disconnect(),
    graceMs,
  );
}

function seedNode(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  // An IPv6 literal comes bracketed from URL; the socket wants it bare.
  return { host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(parsed.port) };
}

/** No command of the service takes a healthy Redis more than a millisecond or two. */
const CLUSTER_COMMAND_TIMEOUT_MS = 1000;

/**
 * Fail fast as one Redis does: while no master serves a slot (a master lost, its replica not yet promoted) a command for
 * that slot is refused at once (503), not retried behind the request; the map of slots is read again every second and on
 * every MOVED, so requests succeed again as soon as the cluster has promoted the replica. Figures: docs/deploy.md.
 */
function clusterOptions(firstSeed: string): ClusterOptions {
  const seed = new URL(firstSeed);
  return {
    // Every read here is part of a read-modify-write script, and a replica may be behind: masters only.
    scaleReads: 'master',
    enableOfflineQueue: false,
    enableAutoPipelining: true,
    clusterRetryStrategy: reconnectDelay,
    retryDelayOnFailover: 0,
    retryDelayOnClusterDown: 0,
    retryDelayOnTryAgain: 0,
    slotsRefreshInterval: 1000,
    slotsRefreshTimeout: 2000,
    redisOptions: {
      ...CONNECTION_OPTIONS,
      // A master cut off (not closed) holds its commands until the cluster promotes its replica, seconds later: a caller gets
      // 503 after this, as from a master that closed, instead of waiting for the promotion.
      commandTimeout: CLUSTER_COMMAND_TIMEOUT_MS,
      ...(seed.username === '' ? {} : { username: decodeURIComponent(seed.username) }),
      ...(seed.password === '' ? {} : { password: decodeURIComponent(seed.password) }),
      ...(seed.protocol === 'rediss:' ? { tls: {} } : {}),
    },
  };
}

/**
 * Readiness. On a cluster: every slot has a master this process is connected to, and each such master says the cluster is
 * ok (a lost master's accounts would be answered 503; with Redis's default cluster-require-full-coverage, everyone's would).
 */
export async function pingRedis(redis: RedisClient): Promise<void> {
  if (!isCluster(redis)) {
    await redis.ping();
    return;
  }
  const masters = new Map(redis.nodes('master').map((node) => [`${node.options.host}:${node.options.port}`, node]));
  const owners = new Set<string>();
  for (let slot = 0; slot < CLUSTER_SLOTS; slot++) {
    const owner = redis.slots[slot]?.[0];
    if (owner === undefined) throw new Error(`Redis Cluster slot ${slot} has no master`);
    owners.add(owner);
  }
  await Promise.all(
    [...owners].map(async (owner) => {
      const master = masters.get(owner);
      if (master === undefined) throw new Error(`Redis Cluster master ${owner} is not connected`);
      const info = await master.cluster('INFO');
      if (!info.includes('cluster_state:ok')) throw new Error(`Redis Cluster master ${owner} says the cluster is not ok`);
    }),
  );
}

const CLUSTER_SLOTS = 16384;

export function isCluster(redis: RedisClient): redis is Cluster {
  return 'isCluster' in redis && redis.isCluster === true;
}

/**
 * Calls `changed` when a cluster's node may have been replaced by one that missed recent writes: when a node leaves the pool
 * (a master lost) and when the set of masters changes (a replica promoted: replication is asynchronous, so the last writes
 * may be lost). One Redis says as much by closing and becoming ready again; a cluster stays ready through a failover.
 */
export function onClusterFailover(cluster: Cluster, changed: () => void): void {
  cluster.on('-node', changed);
  const masters = () =>
    cluster
      .nodes('master')
      .map((node) => `${node.options.host}:${node.options.port}`)
      .sort()
      .join(',');
  let known = '';
  // On every refresh of the slots (each second): cheap, three to a few dozen names.
  cluster.on('refresh', () => {
    const now = masters();
    if (known !== '' && now !== known) changed();
    known = now;
  });
}
