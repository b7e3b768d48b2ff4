// Grows the at-size bench's PostgreSQL database to 10^7 accounts in minutes: accounts and their keys are made by PostgreSQL
// itself (generate_series), then a uniform random sample of all of them is given real keys, whose `username:key` the spread
// GET /user sends.
//
// Writing 10^7 real keys from Node (bench/bulk-accounts.ts, about 100 s per 10^6 here) would take most of an hour, and wrk
// could not hold their 10^7 lines anyway; what the reads must touch is a table and its indexes of the full size, which the
// server-made rows give: one key row per account, the key ids random at the head (as real ones spread over the index), their
// hashes random. A server-made key id has a '_' in it, which no real one (base62) has, so the two can never collide.
import { randomInt } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import pg from 'pg';
import { seedKeys } from './bulk-accounts.ts';

/** Usernames of the seeded accounts: PREFIX + the account's id. */
export const AT_SIZE_PREFIX = 'sized';
/** Rows per INSERT statement: each its own transaction, so a 10^7 load never holds one huge transaction open. */
const CHUNK = 1_000_000;
const BATCH = 10_000;

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, application_name: 'account-api at-size seed', connectionTimeoutMillis: 30_000 });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

export interface Seeded {
  /** The id of the first seeded account; they run on without a gap to `lastId`. */
  readonly firstId: number;
  readonly lastId: number;
}

/**
 * Adds seeded accounts until there are `total` of them (besides the bench's own), each Premium with one key nobody knows,
 * then VACUUM ANALYZE, so that neither autovacuum of the load nor stale statistics run during (or skew) the measurements.
 * `seeded`: what an earlier call left (null the first time).
 */
export async function growTo(url: string, total: number, seeded: Seeded | null, log: (line: string) => void): Promise<Seeded> {
  const client = await connect(url);
  try {
    const firstId = seeded?.firstId ?? Number((await client.query('SELECT coalesce(max(id), 0) + 1 AS first FROM accounts')).rows[0].first);
    let lastId = seeded?.lastId ?? firstId - 1;
    const target = firstId + total - 1;
    const now = new Date().toISOString();
    while (lastId < target) {
      const from = lastId + 1;
      const to = Math.min(target, lastId + CHUNK);
      await client.query('BEGIN');
      await client.query(
        `INSERT INTO accounts (id, username, name, timezone, premium, created_at, updated_at) OVERRIDING SYSTEM VALUE
         SELECT i, $3 || i, 'Seeded ' || $3 || i, 'UTC', true, $4, $4 FROM generate_series($1::bigint, $2::bigint) AS i`,
        [from, to, AT_SIZE_PREFIX, now],
      );
      // key_id: 3 random hex digits, '_', the id in 8 hex digits: unique, spread over the index, never a real key's id.
      await client.query(
        `INSERT INTO api_keys (key_id, account_id, secret_hash, display_prefix, created_at)
         SELECT k, i, decode(md5(random()::text) || md5(random()::text), 'hex'), 'aapi_live_' || k, $3
         FROM (SELECT i, substr(md5(random()::text), 1, 3) || '_' || lpad(to_hex(i), 8, '0') AS k FROM generate_series($1::bigint, $2::bigint) AS i) AS t`,
        [from, to, now],
      );
      await client.query('COMMIT');
      lastId = to;
      log(`    ${(lastId - firstId + 1).toLocaleString('en-US')} of ${total.toLocaleString('en-US')} accounts`);
    }
    // The identity column must hand out ids after ours to accounts made later.
    await client.query(`SELECT setval(pg_get_serial_sequence('accounts', 'id'), (SELECT max(id) FROM accounts))`);
    return { firstId, lastId };
  } finally {
    await client.end().catch(() => undefined);
  }
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

/**
 * Gives `count` seeded accounts drawn uniformly at random from all of them a real key (made as the service makes them,
 * replacing the one nobody knew), and writes their `Authorization` header values, one a line, in the drawn order: what wrk
 * sends. Then VACUUM ANALYZE, the replaced rows included, and a CHECKPOINT.
 */
export async function realKeysFor(url: string, seeded: Seeded, count: number, authorizationsFile: string): Promise<number> {
  const ids = sampleIds(seeded.firstId, seeded.lastId, count);
  const client = await connect(url);
  const output = createWriteStream(authorizationsFile);
  try {
    const keys = seedKeys(AT_SIZE_PREFIX, ids.length);
    for (let at = 0; at < ids.length; at += BATCH) {
      const batch = ids.slice(at, at + BATCH).map((id) => ({ id, key: keys.next().value! }));
      const updated = await client.query(
        `UPDATE api_keys AS k SET key_id = t.key_id, secret_hash = decode(t.hash, 'hex'), display_prefix = t.display_prefix
         FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[]) AS t(account_id, key_id, hash, display_prefix)
         WHERE k.account_id = t.account_id`,
        [batch.map((one) => one.id), batch.map((one) => one.key.keyId), batch.map((one) => one.key.hash.toString('hex')), batch.map((one) => one.key.displayPrefix)],
      );
      if (updated.rowCount !== batch.length) throw new Error(`gave ${updated.rowCount} of ${batch.length} sampled accounts a real key`);
      const lines = batch.map((one) => `Basic ${Buffer.from(`${AT_SIZE_PREFIX}${one.id}:${one.key.token}`).toString('base64')}\n`).join('');
      if (!output.write(lines)) await once(output, 'drain');
    }
    output.end();
    await once(output, 'finish');
    await client.query('VACUUM ANALYZE');
    // The load's dirty pages are written now rather than by a checkpoint during the measurements.
    await client.query('CHECKPOINT');
    return ids.length;
  } finally {
    output.destroy();
    await client.end().catch(() => undefined);
  }
}
