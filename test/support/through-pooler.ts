// Test support: whether this test process reaches PostgreSQL through a PgBouncer (set by pgbouncer.test.ts for the suites it reruns).

/** The port of a PgBouncer in transaction pooling mode in front of the test PostgreSQL; undefined: connect directly. */
export const THROUGH_PGBOUNCER_PORT: string | undefined = process.env.TEST_THROUGH_PGBOUNCER_PORT || undefined;

/** What every server and CLI run needs then: told it sits behind a transaction pooler. */
export const POOLER_ENV: Readonly<Record<string, string>> = THROUGH_PGBOUNCER_PORT === undefined ? {} : { PG_POOLER: 'transaction' };

/** A test PostgreSQL URL (the admin URL's role and password) pointed at `database` through that PgBouncer, or unchanged. */
export function throughPooler(url: string): string {
  if (THROUGH_PGBOUNCER_PORT === undefined) return url;
  const through = new URL(url);
  through.hostname = '127.0.0.1';
  through.port = THROUGH_PGBOUNCER_PORT;
  return through.toString();
}
