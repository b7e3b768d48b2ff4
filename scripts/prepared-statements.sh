#!/usr/bin/env bash
# PostgreSQL backends' and the service's CPU per uncached GET /user (CREDENTIAL_CACHE_MAX_AGE_MS=0: every read is a statement),
# with PG_PREPARED_STATEMENTS on or off: `bash scripts/prepared-statements.sh on` then `... off`. Needs PostgreSQL, Redis and wrk.
set -e
cd "$(dirname "$0")/.."
DB=prep_$RANDOM
psql -h 127.0.0.1 -U root -d test -qc "CREATE DATABASE $DB"
export DATABASE_URL=postgres://root@127.0.0.1:5432/$DB REDIS_URL=redis://127.0.0.1:6379/6 REDIS_KEY_PREFIX=prep$RANDOM: LOG_LEVEL=warn MAX_EVENT_LOOP_DELAY_MS=0
export CREDENTIAL_CACHE_MAX_AGE_MS=0 RATE_LIMIT_PER_KEY=1000000000 RATE_LIMIT_PER_ADDRESS=1000000000 PG_PREPARED_STATEMENTS=$1
npx node src/main.ts migrate >/dev/null
npx node src/main.ts users create alice --premium >/dev/null
KEY=$(npx node src/main.ts keys create alice)
NODE=$(npx node -e 'console.log(process.execPath)'); "$NODE" src/main.ts serve --port 18779 > /tmp/prep-server.log 2>&1 &
SP=$!
sleep 6
AUTH=$(printf 'alice:%s' "$KEY" | base64 -w0)
wrk -t1 -c8 -d3s -H "Authorization: Basic $AUTH" http://127.0.0.1:18779/api/v0/user >/dev/null
PIDS=$(psql -h 127.0.0.1 -U root -d test -Atc "SELECT pid FROM pg_stat_activity WHERE datname='$DB'")
B0=0; for p in $PIDS; do B0=$((B0+$(awk '{print $14+$15}' /proc/$p/stat))); done
S0=$(awk '{print $14+$15}' /proc/$SP/stat)
OUT=$(wrk -t1 -c8 -d10s -H "Authorization: Basic $AUTH" http://127.0.0.1:18779/api/v0/user)
B1=0; for p in $PIDS; do B1=$((B1+$(awk '{print $14+$15}' /proc/$p/stat))); done
S1=$(awk '{print $14+$15}' /proc/$SP/stat)
N=$(echo "$OUT" | awk '/requests in/ {print $1}')
kill $SP; sleep 1
psql -h 127.0.0.1 -U root -d test -qc "DROP DATABASE $DB WITH (FORCE)"
TCK=$(getconf CLK_TCK)
echo "prepared=$1 answers=$N backends_us_per_answer=$(echo "($B1-$B0)*1000000/$TCK/$N" | bc -l | cut -c1-6) service_us_per_answer=$(echo "($S1-$S0)*1000000/$TCK/$N" | bc -l | cut -c1-6)"
