#!/usr/bin/env bash
# make bench-replication: a standby's replay lag during an online backfill, with `apply
# --online --max-replica-lag` throttling and without, in the same run (docs/replication-reference.md).
#
# 1. A primary and a streaming standby made from it by pg_basebackup, each in its own container
#    (scripts/containers/runtime.sh's runtime and image; removed afterwards, whatever happens).
#    The standby gets BENCH_STANDBY_CPUS (0.5) processors: a standby that replays slower than the
#    primary writes, as a smaller or busier replica does.
# 2. A template store at Bench 1 holding BENCH_RECIPES (1000000) recipes (bench/fill.sql); each
#    mode migrates a fresh copy of it to Bench 2 with `apply --online` (its backfills: every
#    recipe's cuisine into a join table, the NULL ratings), once the standby has caught up.
# 3. pgbench is the application meanwhile: BENCH_CLIENTS (2) clients at BENCH_RATE (200)
#    transactions/s, each inserting a row into a table beside the store.
# 4. Every 0.2 s, the primary's pg_stat_replication replay_lag of the standby is sampled, from
#    the start of apply to its end.
# Modes: `throttled` (--max-replica-lag BENCH_LIMIT, default 1 s) and `unthrottled`
# (--max-replica-lag 0). Printed: the migration's time, the replay lag's max and p99.
# Target: with throttling the lag stays about the limit (a batch runs once the lag is under it,
# and may add its own); without it, it is whatever it is.
#
# BENCH_BIN runs that orchestrator binary instead of a release build. Not part of make test.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
me=bench-replication
source scripts/containers/runtime.sh

recipes="${BENCH_RECIPES:-1000000}"
clients="${BENCH_CLIENTS:-2}"
rate="${BENCH_RATE:-200}"
limit="${BENCH_LIMIT:-1}"
cpus="${BENCH_STANDBY_CPUS:-0.5}"
pgbench="$(command -v pgbench || true)"
[ -n "$pgbench" ] || pgbench="$(ls -d /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | sort -V | tail -1)"
[ -x "$pgbench" ] || { echo "$me: pgbench not found (PostgreSQL's bin folder)" >&2; exit 1; }
choose_runtime || { echo "$me: $why" >&2; exit 1; }
choose_image || { echo "$me: $why" >&2; exit 1; }

bin="${BENCH_BIN:-}"
if [ -z "$bin" ]; then
    swift build -c release ${SWIFTPM_FLAGS:-} >/dev/null
    bin="$(swift build -c release ${SWIFTPM_FLAGS:-} --show-bin-path)/orchestrator"
fi
run="$$-$(date +%s)"
label="orchestrator.bench-replication=$run"
password="$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
work="$(mktemp -d)"
cleanup() {
    local ids
    ids="$(timeout 60 "$runtime" ps -aq --filter "label=$label" 2>/dev/null || true)"
    # shellcheck disable=SC2086 # one id per word
    [ -z "$ids" ] || timeout 120 "$runtime" rm -f -v $ids >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

address() { timeout 60 "$runtime" inspect --format '{{.NetworkSettings.IPAddress}}' "$1"; }
wait_ready() {  # host
    local deadline=$((SECONDS + 180))
    until PGPASSWORD="$password" psql -X -q -At -h "$1" -U postgres -d postgres -c 'SELECT 1' >/dev/null 2>&1; do
        [ "$SECONDS" -lt "$deadline" ] || { echo "$me: the server at $1 did not answer within 180 s" >&2; exit 1; }
        sleep 0.5
    done
}

echo "$me: $runtime_version, image $image; starting a primary and a standby ($cpus CPUs)" >&2
timeout 180 "$runtime" run -d --name "bench-replication-$run-primary" --label "$label" --shm-size=1g \
    -e POSTGRES_PASSWORD="$password" "$image" -c fsync=off -c full_page_writes=off -c max_wal_size=4GB >/dev/null
primary="$(address "bench-replication-$run-primary")"
wait_ready "$primary"
timeout 120 "$runtime" exec --user postgres "bench-replication-$run-primary" bash -c \
    "echo 'host replication all all scram-sha-256' >> \"\$PGDATA/pg_hba.conf\" && pg_ctl reload -D \"\$PGDATA\" >/dev/null"
limits=(--cpus "$cpus")
timeout 120 "$runtime" run --help 2>/dev/null | grep -q -- '--cpus' || limits=()
timeout 600 "$runtime" run -d --name "bench-replication-$run-standby" --label "$label" --shm-size=1g "${limits[@]}" \
    -e PGPASSWORD="$password" --user postgres --entrypoint bash "$image" -c "set -e; rm -rf \"\$PGDATA\"/*; \
    pg_basebackup --host=$primary --username=postgres --pgdata=\"\$PGDATA\" --write-recovery-conf --wal-method=stream --checkpoint=fast --no-sync; \
    chmod 700 \"\$PGDATA\"; exec postgres -c unix_socket_directories=/tmp -c fsync=off" >/dev/null
standby="$(address "bench-replication-$run-standby")"
wait_ready "$standby"

url() { echo "postgres://postgres:$password@$primary:5432/$1"; }
on_primary() { psql "$(url postgres)" -X -q -At -v ON_ERROR_STOP=1 "$@"; }
wait_caught_up() {
    local deadline=$((SECONDS + 1800)) behind
    while true; do
        behind="$(on_primary -c "SELECT coalesce(pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn), -1) FROM pg_stat_replication")"
        [ "$behind" = 0 ] && return 0
        [ "$SECONDS" -lt "$deadline" ] || { echo "$me: the standby did not catch up within 30 min" >&2; exit 1; }
        sleep 1
    done
}

echo "$me: filling the template store ($recipes recipes)" >&2
on_primary -c "CREATE DATABASE bench_template"
"$bin" apply --model bench/model --to "Bench 1" --store recipes --database-url "$(url bench_template)" >/dev/null
psql "$(url bench_template)" -X -q -v ON_ERROR_STOP=1 -v schema=recipes -v recipes="$recipes" -f bench/fill.sql
psql "$(url bench_template)" -X -q -v ON_ERROR_STOP=1 -c "CREATE TABLE public.bench_load (id bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())"
echo 'INSERT INTO public.bench_load DEFAULT VALUES;' > "$work/write.sql"

printf '%-12s %12s %14s %14s %8s\n' mode "apply (s)" "lag max (s)" "lag p99 (s)" samples
for mode in throttled unthrottled; do
    database="bench_$mode"
    on_primary -c "CREATE DATABASE $database TEMPLATE bench_template"
    wait_caught_up
    "$pgbench" -n -c "$clients" -j "$clients" -R "$rate" -T 86400 -f "$work/write.sql" "$(url "$database")" >"$work/pgbench-$mode.log" 2>&1 &
    load=$!
    sleep 2
    : > "$work/lag-$mode"
    ( while true; do
        on_primary -c "SELECT coalesce(extract(epoch FROM replay_lag), 0) FROM pg_stat_replication" >> "$work/lag-$mode" 2>/dev/null || true
        sleep 0.2
      done ) &
    sampler=$!
    lag_limit="$limit"
    [ "$mode" = throttled ] || lag_limit=0
    started="$(date +%s.%N)"
    "$bin" apply --online --model bench/model --store recipes --max-replica-lag "$lag_limit" --database-url "$(url "$database")" >"$work/apply-$mode.log" 2>&1 \
        || { echo "$me: apply ($mode) failed:" >&2; tail -5 "$work/apply-$mode.log" >&2; exit 1; }
    ended="$(date +%s.%N)"
    kill "$sampler" "$load" 2>/dev/null || true
    wait "$sampler" "$load" 2>/dev/null || true
    samples="$(wc -l < "$work/lag-$mode")"
    max="$(sort -g "$work/lag-$mode" | tail -1)"
    p99="$(sort -g "$work/lag-$mode" | awk -v n="$samples" 'NR == int(n * 0.99 + 0.999) { print; exit }')"
    printf '%-12s %12.1f %14.2f %14.2f %8d\n' "$mode" "$(echo "$ended - $started" | bc)" "${max:-0}" "${p99:-0}" "$samples"
    on_primary -c "DROP DATABASE $database"
done
