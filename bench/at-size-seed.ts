// Grows the at-size bench's PostgreSQL database to 10^7 accounts in minutes: accounts and their keys are made by PostgreSQL
// itself (generate_series), except that accounts drawn uniformly at random from each size's whole table get real keys, whose
// `username:key` the spread GET /user sends.
//
// Writing 10^7 real keys from Node (bench/bulk-accounts.ts, about 100 s per 10^6 here) would take most of an hour, and wrk
// could not hold their 10^7 lines anyway; what the reads must touch is a table and its indexes of the full size, which the
// server-made rows give: one key row per account, the key ids random at the head (as real ones spread over the index), their
// hashes random. A server-made key id has a '_' in it, which no real one (base62) has, so the two can never collide. The
// sampled accounts are drawn before any row is written and their real keys written in the same statements, in id order, so
// their rows lie where their ids put them, spread over the whole heap, as a later UPDATE (which appends) would not leave them.
import { randomInt } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import pg from 'pg';
import { seedKeys, type SeedKey } from './bulk-accounts.ts';

/** Usernames of the seeded accounts: PREFIX + the account's id. */
export const AT_SIZE_PREFIX = 'sized';
/** Rows per pair of INSERT statements: each pair its own transaction, so a 10^7 load never holds one huge transaction open. */
const CHUNK = 1_000_000;

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, application_name: 'account-api at-size seed', connectionTimeoutMillis: 30_000 });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** `count` distinct ids drawn uniformly from first..last, in random order. */
export function sampleIds(first: number, last: number, count: number): number[] {
  const span = last - first + 1;
  if (count >= span) {
    const all = Array.from({ length: span }, (_, i) => first + i);
    for (let i = all.length - 1; i > 0; i--) {
      const j = randomInt(i + 1);
      [all[i], all[j]] = [all[j]!, all[i]!];
    }
    return all;
  }
  const picked = new Set<number>();
  // Set keeps insertion order, and each draw is uniform: the order is random too.
  while (picked.size < count) picked.add(first + randomInt(span));
  return [...picked];
}

/** The plan of a grown database: which accounts get real keys at each size, and those keys. */
export interface SeedPlan {
  /** The id of the first seeded account (the next after the bench's own); the sizes' accounts run on from it without a gap. */
  readonly firstId: number;
  /** By size: accounts drawn uniformly from all `size` of them, in random order. */
  readonly samples: ReadonlyMap<number, readonly number[]>;
  /** The real key of every account in any sample. */
  readonly keys: ReadonlyMap<number, SeedKey>;
}

/** Draws each size's sample (`sample` accounts, or all of a smaller table) and makes their keys, before any row is written. */
export async function planSeeding(url: string, sizes: readonly number[], sample: number): Promise<SeedPlan> {
  const client = await connect(url);
  let firstId: number;
  try {
    firstId = Number((await client.query('SELECT coalesce(max(id), 0) + 1 AS first FROM accounts')).rows[0].first);
  } finally {
    await client.end().catch(() => undefined);
  }
  const samples = new Map(sizes.map((size) => [size, sampleIds(firstId, firstId + size - 1, Math.min(size, sample))]));
  const ids = [...new Set([...samples.values()].flat())];
  const made = seedKeys(AT_SIZE_PREFIX, ids.length);
  const keys = new Map(ids.map((id) => [id, made.next().value!]));
  return { firstId, samples, keys };
}

/**
 * Adds seeded accounts from `from` (an account id) until there are `total` seeded accounts, each Premium with one key: the
 * plan's real key for a sampled account, one nobody knows for the rest. Returns the next id.
 */
export async function growTo(url: string, plan: SeedPlan, from: number, total: number, log: (line: string) => void): Promise<number> {
  const client = await connect(url);
  try {
    const target = plan.firstId + total - 1;
    const now = new Date().toISOString();
    let next = from;
    while (next <= target) {
      const to = Math.min(target, next + CHUNK - 1);
      const real = [...plan.keys].filter(([id]) => id >= next && id <= to);
      await client.query('BEGIN');
      await client.query(
        `INSERT INTO accounts (id, username, name, timezone, premium, created_at, updated_at) OVERRIDING SYSTEM VALUE
         SELECT i, $3 || i, 'Seeded ' || $3 || i, 'UTC', true, $4, $4 FROM generate_series($1::bigint, $2::bigint) AS i`,
        [next, to, AT_SIZE_PREFIX, now],
      );
      // Others' key_id: 3 random hex digits, '_', the id in 8 hex digits: unique, spread over the index, never a real key's id.
      // In id order, the sampled accounts' real keys among them.
      await client.query(
        `INSERT INTO api_keys (key_id, account_id, secret_hash, display_prefix, created_at)
         SELECT coalesce(r.key_id, g.k), g.i, coalesce(decode(r.hash, 'hex'), decode(md5(random()::text) || md5(random()::text), 'hex')),
                coalesce(r.display_prefix, 'aapi_live_' || g.k), $3
         FROM (SELECT i, substr(md5(random()::text), 1, 3) || '_' || lpad(to_hex(i), 8, '0') AS k FROM generate_series($1::bigint, $2::bigint) AS i) AS g
         LEFT JOIN unnest($4::bigint[], $5::text[], $6::text[], $7::text[]) AS r(account_id, key_id, hash, display_prefix) ON r.account_id = g.i
         ORDER BY g.i`,
        [
          next,
          to,
          now,
          real.map(([id]) => id),
          real.map(([, key]) => key.keyId),
          real.map(([, key]) => key.hash.toString('hex')),
          real.map(([, key]) => key.displayPrefix),
        ],
      );
      await client.query('COMMIT');
      next = to + 1;
      log(`    ${(next - plan.firstId).toLocaleString('en-US')} of ${total.toLocaleString('en-US')} accounts`);
    }
    // The identity column must hand out ids after ours to accounts made later.
    await client.query(`SELECT setval(pg_get_serial_sequence('accounts', 'id'), (SELECT max(id) FROM accounts))`);
    // Neither autovacuum of the load nor stale statistics may run during (or skew) the measurements, nor a checkpoint write
    // the load's dirty pages then.
    await client.query('VACUUM ANALYZE');
    await client.query('CHECKPOINT');
    return next;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The `Authorization` header values of one size's sampled accounts, one a line, in the drawn order: what wrk sends. */
export async function writeAuthorizations(plan: SeedPlan, size: number, file: string): Promise<number> {
  const ids = plan.samples.get(size) ?? [];
  const output = createWriteStream(file);
  for (const id of ids) {
    const line = `Basic ${Buffer.from(`${AT_SIZE_PREFIX}${id}:${plan.keys.get(id)!.token}`).toString('base64')}\n`;
    if (!output.write(line)) await once(output, 'drain');
  }
  output.end();
  await once(output, 'finish');
  return ids.length;
}
