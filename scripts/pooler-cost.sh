#!/usr/bin/env bash
# CPU per answer of PostgreSQL's backends, PgBouncer and the service, directly or through PgBouncer in transaction mode
# (PG_POOLER=transaction): an uncached GET /user (one statement) and a POST /user with If-Match (a transaction, whose BEGIN
# carries the SET LOCAL statement_timeout). `bash scripts/pooler-cost.sh direct`, then `... pgbouncer`. Needs PostgreSQL (trust
# for root on 127.0.0.1), Redis, wrk and, for `pgbouncer`, Debian's pgbouncer and root (it runs as postgres).
set -e
cd "$(dirname "$0")/.."
MODE=$1
DB=pool_$RANDOM
psql -h 127.0.0.1 -U root -d test -qc "CREATE DATABASE $DB"
psql -h 127.0.0.1 -U root -d test -qc "ALTER DATABASE $DB SET statement_timeout = '5s'"
URL=postgres://root@127.0.0.1:5432/$DB
BP=
if [ "$MODE" = pgbouncer ]; then
  DIR=$(mktemp -d); chown postgres "$DIR"
  echo '"root" ""' > "$DIR/users.txt"
  printf '[databases]\n* = host=127.0.0.1 port=5432\n[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = 16432\nunix_socket_dir =\nauth_type = trust\nauth_file = %s/users.txt\npool_mode = transaction\ndefault_pool_size = 4\nlogfile = %s/log\n' "$DIR" "$DIR" > "$DIR/pgbouncer.ini"
  /usr/sbin/pgbouncer -u postgres "$DIR/pgbouncer.ini" 2>/dev/null & BP=$!
  sleep 1
  URL=postgres://root@127.0.0.1:16432/$DB
  export PG_POOLER=transaction
fi
export DATABASE_URL=$URL REDIS_URL=redis://127.0.0.1:6379/6 REDIS_KEY_PREFIX=pool$RANDOM: LOG_LEVEL=warn MAX_EVENT_LOOP_DELAY_MS=0
export CREDENTIAL_CACHE_MAX_AGE_MS=0 RATE_LIMIT_PER_KEY=1000000000 RATE_LIMIT_PER_ADDRESS=1000000000
npx node src/main.ts users create alice --premium >/dev/null
KEY=$(npx node src/main.ts keys create alice)
NODE=$(npx node -e 'console.log(process.execPath)'); "$NODE" src/main.ts serve --port 18780 > /tmp/pool-server.log 2>&1 &
SP=$!
sleep 6
AUTH=$(printf 'alice:%s' "$KEY" | base64 -w0)
LUA=$(mktemp --suffix=.lua)
printf 'wrk.method = "POST"\nwrk.body = "name=Alice"\nwrk.headers["Content-Type"] = "application/x-www-form-urlencoded"\nwrk.headers["If-Match"] = "*"\n' > "$LUA"
cpu() { local t=0; for p in "$@"; do t=$((t+$(awk '{print $14+$15}' /proc/$p/stat))); done; echo $t; }
TCK=$(getconf CLK_TCK)
measure() { # what, wrk arguments...
  local what=$1; shift
  wrk -t1 -c8 -d3s -H "Authorization: Basic $AUTH" "$@" >/dev/null
  local pids; pids=$(psql -h 127.0.0.1 -U root -d test -Atc "SELECT pid FROM pg_stat_activity WHERE datname='$DB'")
  local b0 s0 p0 out b1 s1 p1 n
  b0=$(cpu $pids); s0=$(cpu $SP); p0=$(if [ -n "$BP" ]; then cpu $BP; else echo 0; fi)
  out=$(wrk -t1 -c8 -d10s -H "Authorization: Basic $AUTH" "$@")
  b1=$(cpu $pids); s1=$(cpu $SP); p1=$(if [ -n "$BP" ]; then cpu $BP; else echo 0; fi)
  n=$(echo "$out" | awk '/requests in/ {print $1}')
  echo "$MODE $what answers=$n backends_us=$(echo "($b1-$b0)*1000000/$TCK/$n" | bc -l | cut -c1-6) pgbouncer_us=$(echo "($p1-$p0)*1000000/$TCK/$n" | bc -l | cut -c1-6) service_us=$(echo "($s1-$s0)*1000000/$TCK/$n" | bc -l | cut -c1-6) per answer"
}
measure 'GET /user (one statement)' http://127.0.0.1:18780/api/v0/user
measure 'POST /user If-Match (a transaction)' -s "$LUA" http://127.0.0.1:18780/api/v0/user
kill $SP; sleep 1
if [ -n "$BP" ]; then kill $BP; sleep 1; rm -rf "$DIR"; fi
rm -f "$LUA"
psql -h 127.0.0.1 -U root -d test -qc "DROP DATABASE $DB WITH (FORCE)"
