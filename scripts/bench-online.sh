#!/usr/bin/env bash
# make bench-online: what the application's writes go through while a store migrates, with
# plain `apply` and with `apply --online`, in the same run (docs/online-migrations.md).
#
# pgbench is the application: BENCH_CLIENTS (4) clients at BENCH_RATE (400) transactions/s in
# all, each transaction inserting a row (an ingredient; a chef in the heavyweight store, which
# has no ingredients) and updating a column both versions of a recipe have (its name), and
# writing the same keys to a ledger table outside the store in the same transaction. Against a
# store of BENCH_RECIPES (1000000) recipes, for each part (BENCH_PARTS, "lightweight
# heavyweight expand expand-heavyweight": the steps of `make bench`; expand: the lightweight
# step under `apply --expand` with two writers, scripts/bench-online-expand.sh; expand-heavyweight:
# the heavyweight one, its new version written through a reverse mapping,
# scripts/bench-online-expand-heavyweight.sh) and each mode (offline,
# then online):
#   1. a fresh copy of the filled store; pgbench starts, writing with a per-transaction log (-l);
#   2. after BENCH_SETTLE (2) seconds, `apply` (or `apply --online`) runs; BENCH_SETTLE seconds
#      after it ends, pgbench is stopped;
#   3. over the transactions that overlap the migration: the longest (the longest write
#      stall) and the p99 of the time each ran (pgbench's latency minus its schedule lag, which
#      is printed apart: a machine that cannot keep the rate puts clients behind schedule); failed transactions (pgbench's aborted clients and errors);
#      the migration's time; and the check that every committed write is in the migrated
#      store (each ledger row's insert is there, each updated recipe holds a name one of its
#      committed updates wrote).
# Targets with --online: longest stall <= 1 s for both steps, no failed or lost write, total
# time <= 3x the offline apply. A part whose --online is refused is reported as such.
#
# Needs DATABASE_URL (make bench-online provides a throwaway server); databases are named
# online_bench_*. BENCH_BIN runs that orchestrator binary instead of a release build.
# BENCH_ONLINE_ARGS adds options to `apply --online` (`--batch-time 50`, `--batch-size 5000`),
# to compare batch sizes; the online apply's progress (JSON lines) is kept in its log, and the
# batches' count and mean time of each batched phase are printed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/bench-lib.sh

bench_require_database_url bench-online bench-online
recipes="${BENCH_RECIPES:-1000000}"
parts="${BENCH_PARTS:-lightweight heavyweight expand expand-heavyweight}"
clients="${BENCH_CLIENTS:-4}"
rate="${BENCH_RATE:-400}"
settle="${BENCH_SETTLE:-2}"
store=recipes
bench_require_parts bench-online "lightweight heavyweight expand expand-heavyweight" $parts
(( recipes >= 100 )) || { echo "bench-online: BENCH_RECIPES must be at least 100" >&2; exit 64; }
pgbench="$(command -v pgbench || true)"
[ -n "$pgbench" ] || pgbench="$(ls -d /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | sort -V | tail -1)"
[ -x "$pgbench" ] || { echo "bench-online: pgbench not found (PostgreSQL's bin folder)" >&2; exit 1; }

bin="${BENCH_BIN:-}"
[ -n "$bin" ] || bin="$(bench_release_binary)"
work="$(mktemp -d)"
# The logs go unless BENCH_KEEP is set.
cleanup() { [ -n "${BENCH_KEEP:-}" ] || rm -rf "$work"; }
trap cleanup EXIT
[ -z "${BENCH_KEEP:-}" ] || echo "bench-online: logs kept in $work"

fill_template() {  # database model version fill
    admin -c "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1"
    "$bin" apply --model "$2" --to "$3" --store "$store" --database-url "$(url_for "$1")" >/dev/null
    psql "$(url_for "$1")" -X -q -v ON_ERROR_STOP=1 -v schema="$store" -v recipes="$recipes" -f "$4"
    psql "$(url_for "$1")" -X -q -v ON_ERROR_STOP=1 \
        -c "CREATE TABLE public.online_bench_ledger (txid bigint PRIMARY KEY, recipe bigint NOT NULL, name text NOT NULL)"
}

# The application's transaction: $1 is the table a row is inserted into.
write_script() {  # table columns values
    cat > "$work/write.sql" <<SQL
\\set rid random(1, $recipes)
BEGIN;
INSERT INTO $store.$1 ($2) VALUES ($3);
UPDATE $store.recipe SET name = 'recipe ' || :rid || ' by ' || txid_current() WHERE _pk = :rid;
INSERT INTO public.online_bench_ledger (txid, recipe, name) VALUES (txid_current(), :rid, 'recipe ' || :rid || ' by ' || txid_current());
END;
SQL
}

# Runs one migration under pgbench; prints "status seconds stall_ms p99_ms committed failed lost".
measure() {  # label database apply-arguments…
    local label="$1" database="$2"
    shift 2
    local url log="$work/$label"
    url="$(url_for "$database")"
    mkdir -p "$log"
    # shellcheck disable=SC2086
    (cd "$log" && exec "$pgbench" -n -c "$clients" -j "$(( clients < 2 ? clients : 2 ))" -R "$rate" -T 36000 -l \
        ${PGBENCH_SCRIPTS:--f $work/write.sql} "$url" >"$log/stdout" 2>"$log/stderr") &
    bench_pid=$!
    # measure runs in a subshell ($(…)): its own trap stops pgbench if the run fails.
    trap 'kill -TERM "${bench_pid:-}" 2>/dev/null || true' EXIT
    sleep "$settle"
    local started ended status=ok
    started="$(date +%s.%N)"
    if ! "$bin" apply "$@" --store "$store" --database-url "$url" >"$log/apply.out" 2>"$log/apply.err"; then status=failed; fi
    ended="$(date +%s.%N)"
    sleep "${SETTLE_AFTER:-$settle}"
    # TERM, not INT: a shell running in the background starts its jobs with SIGINT ignored.
    kill -TERM "$bench_pid" 2>/dev/null || true
    wait "$bench_pid" 2>/dev/null || true
    local seconds
    seconds="$(awk -v a="$started" -v b="$ended" 'BEGIN { printf "%.2f", b - a }')"
    # Log lines: client transaction latency_us script epoch_s epoch_us [lag]; the transaction
    # ran from (epoch - latency) to epoch: it overlaps the migration when it ended after the
    # start and began before the end.
    # A transaction's time counts from its scheduled start (-R): the wait for a lock, but also
    # the lag of a client behind schedule when the machine cannot keep the rate (the log's
    # last field). The stall is the time it ran: latency minus that lag; the lag is reported
    # beside it. Lines cut by pgbench's end are skipped.
    # The third column is the script (the writer, with several -f); transactions that began
    # after the migration go to "after", for the writers' cost at rest.
    cat "$log"/pgbench_log.* 2>/dev/null | awk -v a="$started" -v b="$ended" -v after="$log/after" '
        NF >= 6 && $5 > 1e9 { lag = (NF >= 7 ? $7 : 0); end = $5 + $6 / 1e6; begin = end - ($3 - lag) / 1e6
          if (end >= a && begin <= b) print ($3 - lag) / 1000, lag / 1000, $4
          else if (begin > b) print ($3 - lag) / 1000, $4 > after }' | sort -g >"$log/window"
    local stall p99 in_window lag
    in_window="$(wc -l <"$log/window")"
    stall="$(tail -1 "$log/window" | awk '{ printf "%.0f", $1 }')"
    p99="$(awk -v n="$in_window" 'NR == (int(n * 0.99) < 1 ? 1 : int(n * 0.99)) { printf "%.0f", $1 }' "$log/window")"
    lag="$(awk '$2 > m { m = $2 } END { printf "%.0f", m }' "$log/window")"
    local failed committed lost
    failed="$(grep -c -E 'aborted|ERROR' "$log/stderr" || true)"
    committed="$(psql "$url" -X -At -c "SELECT count(*) FROM public.online_bench_ledger")"
    lost="$(psql "$url" -X -At -c "$LOST_QUERY")"
    echo "$status $seconds ${stall:-0} ${p99:-0} $committed $failed $lost $in_window ${lag:-0}"
    [ "$status" = ok ] || { echo "bench-online: $label: apply failed:" >&2; cat "$log/apply.err" >&2; }
}

report() {  # part offline-line online-line
    local part="$1"
    read -r o_status o_seconds o_stall o_p99 o_committed o_failed o_lost o_n o_lag <<<"$2"
    echo
    echo "$part step, $recipes recipes, pgbench $clients clients at $rate tx/s (host load: $(cut -d' ' -f1-3 /proc/loadavg)):"
    printf "  plain apply:     %6.2f s, longest write stall %6d ms, p99 %6d ms over %d transactions, %d committed, %d failed, %d lost; clients up to %d ms behind schedule\n" \
        "$o_seconds" "$o_stall" "$o_p99" "$o_n" "$o_committed" "$o_failed" "$o_lost" "$o_lag"
    if [ -z "$3" ]; then
        return
    fi
    read -r n_status n_seconds n_stall n_p99 n_committed n_failed n_lost n_n n_lag <<<"$3"
    if [ "$n_status" = refused ]; then
        echo "  apply --online:  not available for this step: $(cat "$work/$part-online/apply.err")"
        return
    fi
    printf "  apply --online:  %6.2f s, longest write stall %6d ms, p99 %6d ms over %d transactions, %d committed, %d failed, %d lost; clients up to %d ms behind schedule\n" \
        "$n_seconds" "$n_stall" "$n_p99" "$n_n" "$n_committed" "$n_failed" "$n_lost" "$n_lag"
    awk -v s="$n_stall" -v f="$n_failed" -v l="$n_lost" -v o="$o_seconds" -v n="$n_seconds" -v st="$n_status" 'BEGIN {
        printf "  targets: stall %s (<= 1000 ms), failed+lost %s (0), time %.2fx offline %s (<= 3x), apply %s\n",
            (s <= 1000 ? "met" : "MISSED"), (f + l == 0 ? "met" : "MISSED"), n / o, (n / o <= 3 ? "met" : "MISSED"), st }'
}

# Per batched phase of an online apply's JSON progress: rows, batches (rows events; the
# reporter shows at most one a second, so the count is a floor) and mean time per 1000 rows.
batch_times() {
    grep '"event":"passFinished"' "$1" | grep '"stage":"online"' | grep -v '"rowsDone":0,' \
        | sed -E 's/\\"//g; s/.*"phase":"([^"]*)".*"rowsDone":([0-9]+).*"elapsedSeconds":([0-9.]+).*/\1|\2|\3/' \
        | while IFS='|' read -r phase rows seconds; do
            awk -v p="$phase" -v r="$rows" -v s="$seconds" 'BEGIN { printf "  batched phase %s: %d rows in %.2f s, %.2f ms per 1000 rows\n", p, r, s, (r > 0 ? s * 1000000 / r : 0) }' >&2
        done || true
}

run_part() {  # part model from-version fill insert-table insert-columns insert-values
    local part="$1" model="$2"
    echo "bench-online: $part: filling the template store ($recipes recipes)"
    fill_template online_bench_template "$model" "$3" "$4"
    write_script "$5" "$6" "$7"
    admin -c "DROP DATABASE IF EXISTS online_bench_run" -c "CREATE DATABASE online_bench_run TEMPLATE online_bench_template"
    local offline online=""
    offline="$(measure "$part-offline" online_bench_run --model "$model")"
    admin -c "DROP DATABASE IF EXISTS online_bench_run" -c "CREATE DATABASE online_bench_run TEMPLATE online_bench_template"
    if "$bin" plan --online --format json --model "$model" --store "$store" --database-url "$(url_for online_bench_run)" \
        | grep -q '"supported":false'; then
        mkdir -p "$work/$part-online"
        "$bin" apply --online --model "$model" --store "$store" --database-url "$(url_for online_bench_run)" \
            >/dev/null 2>"$work/$part-online/apply.err" || true
        online="refused"
    else
        # shellcheck disable=SC2086
        online="$(measure "$part-online" online_bench_run --online ${BENCH_ONLINE_ARGS:-} --format json --model "$model")"
        batch_times "$work/$part-online/apply.out"
    fi
    admin -c "DROP DATABASE IF EXISTS online_bench_run" -c "DROP DATABASE IF EXISTS online_bench_template"
    report "$part" "$offline" "$online"
}

# The writes lost: each ledger row's insert into table $1 (named 'bench ' || txid), and on each
# recipe updated, a name one of its committed updates wrote.
lost_query() {
    echo "SELECT (SELECT count(*) FROM public.online_bench_ledger l WHERE NOT EXISTS
                     (SELECT 1 FROM $store.$1 w WHERE w.name = 'bench ' || l.txid))
                + (SELECT count(*) FROM (SELECT DISTINCT recipe FROM public.online_bench_ledger) u
                     WHERE NOT EXISTS (SELECT 1 FROM $store.recipe r JOIN public.online_bench_ledger l
                         ON l.recipe = r._pk AND l.name = r.name WHERE r._pk = u.recipe))"
}

# shellcheck source=scripts/bench-online-expand.sh
source scripts/bench-online-expand.sh
# shellcheck source=scripts/bench-online-expand-heavyweight.sh
source scripts/bench-online-expand-heavyweight.sh

for part in $parts; do
    case "$part" in
        lightweight)
            LOST_QUERY="$(lost_query ingredient)"
            run_part lightweight bench/model "Bench 1" bench/fill.sql ingredient "name, amount, recipe_pk" \
                "'bench ' || txid_current(), '1 g', :rid"
            ;;
        heavyweight)
            LOST_QUERY="$(lost_query chef)"
            run_part heavyweight bench/heavyweight/model "Heavy 1" bench/heavyweight/fill.sql chef "name" \
                "'bench ' || txid_current()"
            ;;
        expand)
            LOST_QUERY="$(lost_query ingredient)"
            run_expand
            ;;
        expand-heavyweight)
            run_expand_heavyweight
            ;;
    esac
done
