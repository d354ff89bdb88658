# Sourced by scripts/bench-online.sh: the `expand` part. The lightweight step of `make bench`
# (Bench 1 -> 2: renames, a backfill, a to-one made to-many) under `apply --expand`, with two
# writers in one pgbench run, each half of the rate:
#   old release: its transactions find the store through search_path "<store>@Bench_1", <store>:
#     the tables until the switch-over, the old version's views after it;
#   new release: search_path <store>, the tables.
# Both write what both versions have (an ingredient, a recipe's name, the ledger). Reported:
# each writer's longest stall and p99 during the migration (target: stall <= 20 ms each), 0
# failed and 0 lost, and what the views cost a write: each writer's p50 and p99 over the
# BENCH_AFTER (10) seconds after the migration, when the old release writes through the views.

expand_script() {  # file search_path
    cat > "$1" <<SQL
\\set rid random(1, $recipes)
BEGIN;
SET LOCAL search_path = $2;
INSERT INTO ingredient (name, amount, recipe_pk) VALUES ('bench ' || txid_current(), '1 g', :rid);
UPDATE recipe SET name = 'recipe ' || :rid || ' by ' || txid_current() WHERE _pk = :rid;
INSERT INTO public.online_bench_ledger (txid, recipe, name) VALUES (txid_current(), :rid, 'recipe ' || :rid || ' by ' || txid_current());
END;
SQL
}

# p50 and p99 (ms) of writer $2's transactions in file $1 (lines "ms script"); "- -" for none.
expand_percentiles() {
    awk -v w="$2" '$2 == w { print $1 }' "$1" | sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) { print "- -"; exit }
        p50 = int(NR * 0.5); p99 = int(NR * 0.99); if (p50 < 1) p50 = 1; if (p99 < 1) p99 = 1
        printf "%.2f %.2f %d\n", v[p50], v[p99], NR }'
}

run_expand() {
    echo "bench-online: expand: filling the template store ($recipes recipes)"
    fill_template online_bench_template bench/model "Bench 1" bench/fill.sql
    expand_script "$work/old.sql" "\"$store@Bench_1\", $store"
    expand_script "$work/new.sql" "$store"
    admin -c "DROP DATABASE IF EXISTS online_bench_run" -c "CREATE DATABASE online_bench_run TEMPLATE online_bench_template"
    local line
    line="$(PGBENCH_SCRIPTS="-f $work/old.sql@1 -f $work/new.sql@1" SETTLE_AFTER="${BENCH_AFTER:-10}" \
        measure expand online_bench_run --expand --allow-data-loss --format json --model bench/model)"
    read -r status seconds _ _ committed failed lost n lag <<<"$line"
    local log="$work/expand" writer label stall p99
    echo
    echo "expand step (apply --expand, Bench 1 -> Bench 2), $recipes recipes, pgbench $clients clients at $rate tx/s, two writers (host load: $(cut -d' ' -f1-3 /proc/loadavg)):"
    printf "  apply --expand:  %6.2f s (%s), %d committed, %d failed, %d lost over %d transactions during it; clients up to %d ms behind schedule\n" \
        "$seconds" "$status" "$committed" "$failed" "$lost" "$n" "$lag"
    local worst=0
    for writer in 0 1; do
        label=$([ "$writer" = 0 ] && echo "old release (views)" || echo "new release (tables)")
        stall="$(awk -v w="$writer" '$3 == w { m = $1 } END { printf "%.0f", m }' "$log/window")"
        p99="$(awk -v w="$writer" '$3 == w { print $1 }' "$log/window" | awk '{ v[NR] = $1 } END { i = int(NR * 0.99); if (i < 1) i = 1; printf "%.0f", v[i] }')"
        printf "  %-21s during: longest write stall %6d ms, p99 %6d ms\n" "$label" "${stall:-0}" "${p99:-0}"
        (( ${stall:-0} > worst )) && worst=${stall:-0}
    done
    read -r o50 o99 on <<<"$(expand_percentiles "$log/after" 0)"
    read -r n50 n99 nn <<<"$(expand_percentiles "$log/after" 1)"
    echo "  after it (${BENCH_AFTER:-10} s): old release through the views p50 $o50 ms, p99 $o99 ms ($on transactions); new release on the tables p50 $n50 ms, p99 $n99 ms ($nn)"
    awk -v o50="$o50" -v n50="$n50" -v o99="$o99" -v n99="$n99" 'BEGIN {
        if (o50 == "-" || n50 == "-") exit
        printf "  view overhead per write transaction: p50 %+.2f ms (%.2fx), p99 %+.2f ms (%.2fx)\n", o50 - n50, (n50 > 0 ? o50 / n50 : 0), o99 - n99, (n99 > 0 ? o99 / n99 : 0) }'
    awk -v s="$worst" -v f="$failed" -v l="$lost" -v st="$status" 'BEGIN {
        printf "  targets: stall %s (<= 20 ms each writer), failed+lost %s (0), apply %s\n", (s <= 20 ? "met" : "MISSED"), (f + l == 0 ? "met" : "MISSED"), st }'
    admin -c "DROP DATABASE IF EXISTS online_bench_run" -c "DROP DATABASE IF EXISTS online_bench_template"
}
