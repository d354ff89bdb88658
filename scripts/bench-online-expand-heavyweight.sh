# Sourced by scripts/bench-online.sh: the `expand-heavyweight` part. The heavyweight step of
# `make bench` (Heavy 1 -> 2, recipes-1-to-2.yaml) under `apply --expand`, with a reverse
# mapping model (Heavy 2 -> Heavy 1, written here beside a copy of the model) so that the new
# version is written through its views (docs/rolling-deploys-heavyweight.md). Two writers in one
# pgbench run, each half of the rate, from before the run until after `complete`:
#   old release: search_path <store>: the store's tables, at Heavy 1 until the swap;
#   new release: search_path "<store>@Heavy_2", <store>: the store's tables until the views
#     exist, then the views (each write translated into the store's tables and written into
#     staging), then, once `complete` drops them, the store's tables at Heavy 2.
# Both insert a chef and rename a recipe (what both versions have). Reported: each writer's
# longest stall and p99 over the whole run (apply --expand, the wait, complete: the switch-over
# holds writes for the last round and the swap, so the target is the online heavyweight step's,
# <= 1 s), 0 failed and 0 lost after complete, and during the wait each writer's p50 and p99:
# the new release's through the views against the old release's on the tables.

expand_heavyweight_script() {  # file search_path
    cat > "$1" <<SQL
\\set rid random(1, $recipes)
BEGIN;
SET LOCAL search_path = $2;
INSERT INTO chef (name) VALUES ('bench ' || txid_current());
UPDATE recipe SET name = 'recipe ' || :rid || ' by ' || txid_current() WHERE _pk = :rid;
INSERT INTO public.online_bench_ledger (txid, recipe, name) VALUES (txid_current(), :rid, 'recipe ' || :rid || ' by ' || txid_current());
END;
SQL
}

# Waits (at most $3 seconds) until file $1 holds the text $2; false when it does not.
wait_for_line() {
    local deadline=$(( $(date +%s) + $3 ))
    until grep -q "$2" "$1" 2>/dev/null; do
        (( $(date +%s) < deadline )) || return 1
        sleep 0.2
    done
}

run_expand_heavyweight() {
    echo "bench-online: expand-heavyweight: filling the template store ($recipes recipes)"
    fill_template online_bench_template bench/heavyweight/model "Heavy 1" bench/heavyweight/fill.sql
    local model="$work/heavy-model" log="$work/expand-heavyweight" url views="\"$store@Heavy_2\""
    mkdir -p "$model" "$log"
    cp bench/heavyweight/model/*.yaml "$model/"
    cat > "$model/recipes-2-to-1.yaml" <<YAML
source: Heavy 2
destination: Heavy 1
entityMappings:
  - {name: ChefToChef, type: copy, source: Chef, destination: Chef}
  - name: RecipeToRecipe
    type: transform
    source: Recipe
    destination: Recipe
    attributes:
      temperature: "\$source.temperatureC * 1.8 + 32.0"
YAML
    expand_heavyweight_script "$work/heavy-old.sql" "$store"
    expand_heavyweight_script "$work/heavy-new.sql" "$views, $store"
    admin -c "DROP DATABASE IF EXISTS online_bench_run" -c "CREATE DATABASE online_bench_run TEMPLATE online_bench_template"
    url="$(url_for online_bench_run)"
    (cd "$log" && exec "$pgbench" -n -c "$clients" -j "$(( clients < 2 ? clients : 2 ))" -R "$rate" -T 36000 -l \
        -f "$work/heavy-old.sql@1" -f "$work/heavy-new.sql@1" "$url" >"$log/stdout" 2>"$log/stderr") &
    local bench=$!
    sleep "$settle"
    local started waiting completing ended status=ok
    started="$(date +%s.%N)"
    "$bin" apply --expand --model "$model" --store "$store" --database-url "$url" >"$log/apply.log" 2>&1 &
    local apply=$!
    if wait_for_line "$log/apply.log" "waiting for orchestrator complete" 1800; then
        waiting="$(date +%s.%N)"
        sleep "${BENCH_AFTER:-10}"
        completing="$(date +%s.%N)"
        "$bin" complete --store "$store" --database-url "$url" >"$log/complete.out" 2>&1 || status=failed
    else
        status=failed
        waiting="$(date +%s.%N)"
        completing="$waiting"
    fi
    wait "$apply" || status=failed
    ended="$(date +%s.%N)"
    sleep "$settle"
    kill -TERM "$bench" 2>/dev/null || true
    wait "$bench" 2>/dev/null || true
    # Transactions overlapping the run (stalls, by writer) and those that began in the wait and
    # ended before complete (the writers' cost, by writer); the log's fields as in measure().
    cat "$log"/pgbench_log.* 2>/dev/null | awk -v a="$started" -v b="$ended" -v w0="$waiting" -v w1="$completing" -v wait="$log/wait" '
        NF >= 6 && $5 > 1e9 { lag = (NF >= 7 ? $7 : 0); end = $5 + $6 / 1e6; ms = ($3 - lag) / 1000; begin = end - ms / 1000
          if (end >= a && begin <= b) print ms, $4
          if (begin >= w0 + 1 && end <= w1) print ms, $4 > wait }' | sort -g >"$log/window"
    local failed committed lost
    failed="$(grep -c -E 'aborted|ERROR' "$log/stderr" || true)"
    committed="$(psql "$url" -X -At -c "SELECT count(*) FROM public.online_bench_ledger")"
    lost="$(psql "$url" -X -At -c "$(lost_query chef)")"
    echo
    echo "heavyweight step under apply --expand with a reverse mapping (Heavy 1 -> Heavy 2), $recipes recipes, pgbench $clients clients at $rate tx/s, two writers (host load: $(cut -d' ' -f1-3 /proc/loadavg)):"
    awk -v a="$started" -v w="$waiting" -v c="$completing" -v e="$ended" -v st="$status" -v n="$committed" -v f="$failed" -v l="$lost" 'BEGIN {
        printf "  apply --expand reached the wait in %.2f s; complete switched over in %.2f s (%s); %d committed, %d failed, %d lost\n", w - a, e - c, st, n, f, l }'
    local worst=0 writer label stall p99 p50w p99w nw
    for writer in 0 1; do
        label=$([ "$writer" = 0 ] && echo "old release (tables)" || echo "new release (views)")
        stall="$(awk -v w="$writer" '$2 == w { m = $1 } END { printf "%.0f", m }' "$log/window")"
        p99="$(awk -v w="$writer" '$2 == w { print $1 }' "$log/window" | awk '{ v[NR] = $1 } END { i = int(NR * 0.99); if (i < 1) i = 1; printf "%.0f", v[i] }')"
        read -r p50w p99w nw <<<"$(expand_percentiles "$log/wait" "$writer")"
        printf "  %-21s whole run: longest write stall %5d ms, p99 %5d ms; during the wait: p50 %s ms, p99 %s ms (%s transactions)\n" \
            "$label" "${stall:-0}" "${p99:-0}" "$p50w" "$p99w" "${nw:-0}"
        (( ${stall:-0} > worst )) && worst=${stall:-0}
    done
    read -r o50 o99 _ <<<"$(expand_percentiles "$log/wait" 0)"
    read -r n50 n99 _ <<<"$(expand_percentiles "$log/wait" 1)"
    awk -v o50="$o50" -v n50="$n50" -v o99="$o99" -v n99="$n99" 'BEGIN {
        if (o50 == "-" || n50 == "-") exit
        printf "  writing through the views against the tables, per transaction: p50 %+.2f ms (%.2fx), p99 %+.2f ms (%.2fx)\n", n50 - o50, (o50 > 0 ? n50 / o50 : 0), n99 - o99, (o99 > 0 ? n99 / o99 : 0) }'
    # The switch-over of a heavyweight step holds writes for the last round and the swap: its
    # target is the online heavyweight step's (<= 1 s); 20 ms is the lightweight expand's.
    awk -v s="$worst" -v f="$failed" -v l="$lost" -v st="$status" 'BEGIN {
        printf "  targets: stall %s (<= 1000 ms, a heavyweight switch-over; %s 20 ms), failed+lost %s (0), run %s\n",
            (s <= 1000 ? "met" : "MISSED"), (s <= 20 ? "within" : "over"), (f + l == 0 ? "met" : "MISSED"), st }'
    [ "$status" = ok ] || { echo "bench-online: expand-heavyweight failed:" >&2; cat "$log/apply.log" "$log/complete.out" >&2 || true; }
    admin -c "DROP DATABASE IF EXISTS online_bench_run" -c "DROP DATABASE IF EXISTS online_bench_template"
}
