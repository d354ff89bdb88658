#!/usr/bin/env bash
# make bench: times `orchestrator apply` against the same change hand-written in SQL (run by
# psql), alternating, on identical copies of a filled store (CREATE DATABASE … TEMPLATE), with a
# check that both give the same store. Three parts, in this order:
#   lightweight  a step combining several rules (bench/model, bench/fill.sql, bench/handwritten.sql):
#                both medians, min/max, the ratio and orchestrator's peak RSS;
#   heavyweight  Fahrenheit -> Celsius by a mapping model (bench/heavyweight/): set-based against
#                hand-written INSERT … SELECT into a new schema (the ratio), the same step with
#                --streaming (rows/s), and the streaming peak RSS at a tenth of the recipes and at
#                all of them;
#   positions    a to-many made ordered (bench/positions/): every ingredient numbered within its
#                recipe, against the hand-written ADD COLUMN + UPDATE … row_number(): both
#                medians, min/max and the ratio;
#   heavyweight-positions
#                the same store through a heavyweight step (bench/positions-heavyweight/): stage 2
#                numbers every ingredient by key from the to-one side, against the hand-written
#                new schema numbered by the same UPDATE … row_number() (the shape stage 2 had
#                before it sorted the positions by key): both medians, min/max and the ratio
#                (make bench-positions runs these two parts alone).
# Needs DATABASE_URL (make bench provides a throwaway server). BENCH_RECIPES (default 1000000;
# lightweight ingredients are 3x), BENCH_ROUNDS (default 5 lightweight, 3 heavyweight),
# BENCH_HEAVYWEIGHT_ROUNDS (default: BENCH_ROUNDS when set, else 3), BENCH_POSITIONS_ROUNDS
# (default: BENCH_ROUNDS when set, else 3; both positions parts), BENCH_PARTS (default
# "lightweight heavyweight positions heavyweight-positions"), BENCH_BIN (an orchestrator binary to time instead of this tree's release build,
# e.g. an earlier one for before/after figures).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/bench-lib.sh

bench_require_database_url bench bench
recipes="${BENCH_RECIPES:-1000000}"
rounds="${BENCH_ROUNDS:-5}"
heavyweight_rounds="${BENCH_HEAVYWEIGHT_ROUNDS:-${BENCH_ROUNDS:-3}}"
positions_rounds="${BENCH_POSITIONS_ROUNDS:-${BENCH_ROUNDS:-3}}"
parts="${BENCH_PARTS:-lightweight heavyweight positions heavyweight-positions}"
store=recipes
bench_require_parts bench "lightweight heavyweight positions heavyweight-positions" $parts
(( recipes >= 10 )) || { echo "bench: BENCH_RECIPES must be at least 10" >&2; exit 64; }

bin="${BENCH_BIN:-$(bench_release_binary)}"

# A template database holding a store of `version`, filled by `fill` with `count` recipes.
fill_template() {  # database model version fill count
    admin -c "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1"
    "$bin" apply --model "$2" --to "$3" --store "$store" --database-url "$(url_for "$1")" >/dev/null
    psql "$(url_for "$1")" -X -q -v ON_ERROR_STOP=1 -v schema="$store" -v recipes="$5" -f "$4"
}

# Fresh copies of a template database, replacing earlier ones.
copies() {  # template database…
    local template="$1" statements=()
    shift
    for database in "$@"; do statements+=(-c "DROP DATABASE IF EXISTS $database" -c "CREATE DATABASE $database TEMPLATE $template"); done
    admin "${statements[@]}"
}

drop_databases() {
    local statements=()
    for database in "$@"; do statements+=(-c "DROP DATABASE IF EXISTS $database"); done
    admin "${statements[@]}"
}

# Stops the bench when two databases' stores differ by the fingerprint function given.
same_stores() {  # fingerprint what database database
    if [ "$("$1" "$(url_for "$3")")" != "$("$1" "$(url_for "$4")")" ]; then
        echo "bench: $2 give different stores" >&2
        diff <("$1" "$(url_for "$3")" | tr ',' '\n') <("$1" "$(url_for "$4")" | tr ',' '\n') >&2 || true
        exit 1
    fi
}

timed() {  # prints "seconds peak_kb user_cpu_seconds"
    local out
    out="$(mktemp)"
    /usr/bin/time -f "%e %M %U" -o "$out" "$@" >/dev/null
    cat "$out"
    rm -f "$out"
}

# "median min max" of the numbers given.
stats() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "%.3f %.3f %.3f\n", m, a[1], a[NR]}'; }
largest() { printf '%s\n' "$@" | sort -n | tail -1; }

# One line per store: what both ways must agree on.
fingerprint() {
    psql "$1" -X -At -v ON_ERROR_STOP=1 -c "
        SELECT (SELECT count(*) || ':' || sum(hashtext(name || '|' || coalesce(directions, '') || '|' || rating || '|'
                   || coalesce(summary, '') || '|' || servings || '|' || coalesce(chef_pk, 0))) FROM $store.recipe),
               (SELECT count(*) || ':' || sum(hashtext(cuisine_pk || '|' || recipes_pk)) FROM $store.cuisine__recipes),
               (SELECT count(*) || ':' || min(_entity) FROM $store.cook),
               (SELECT string_agg(table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable, ',' ORDER BY table_name, column_name)
                  FROM information_schema.columns WHERE table_schema = '$store')"
}

# Rounds of `apply` on one copy of a template against the hand-written SQL on another, each
# way first in turn, stopping when the stores differ; the times (and apply's peak RSS) go to
# orchestrator_times, psql_times and peaks.
against_handwritten() {  # label template model handwritten.sql fingerprint rounds
    local label="$1" template="$2" model="$3" handwritten="$4" fingerprint="$5" count="$6"
    orchestrator_times=() psql_times=() peaks=()
    run_orchestrator() {
        read -r seconds peak _ < <(timed "$bin" apply --model "$model" --store "$store" --database-url "$(url_for bench_o)")
        orchestrator_times+=("$seconds"); peaks+=("$peak")
    }
    run_psql() {
        read -r seconds _ < <(timed psql "$(url_for bench_h)" -X -q -v ON_ERROR_STOP=1 -v schema="$store" -f "$handwritten")
        psql_times+=("$seconds")
    }
    for round in $(seq 1 "$count"); do
        copies "$template" bench_o bench_h
        if (( round % 2 )); then run_orchestrator; run_psql; else run_psql; run_orchestrator; fi
        same_stores "$fingerprint" "$label round $round: orchestrator and the hand-written SQL" bench_o bench_h
        echo "bench: $label round $round: orchestrator ${orchestrator_times[-1]} s, psql ${psql_times[-1]} s"
    done
    drop_databases bench_o bench_h "$template"
}

# The summary of against_handwritten's times, under a heading.
ratio_summary() {  # heading
    read -r o_med o_min o_max < <(stats "${orchestrator_times[@]}")
    read -r p_med p_min p_max < <(stats "${psql_times[@]}")
    echo
    echo "$1"
    echo "  orchestrator apply: median ${o_med} s (min ${o_min}, max ${o_max}), process start included"
    echo "  hand-written SQL:   median ${p_med} s (min ${p_min}, max ${p_max}), psql start included"
    awk -v o="$o_med" -v p="$p_med" 'BEGIN { printf "  ratio orchestrator / hand-written: %.2f (target <= 1.15)\n", o / p }'
}

lightweight() {
    echo "bench: filling the template store: $recipes recipes, $((recipes * 3)) ingredients"
    fill_template bench_template bench/model "Bench 1" bench/fill.sql "$recipes"
    against_handwritten lightweight bench_template bench/model bench/handwritten.sql fingerprint "$rounds"
    ratio_summary "lightweight step, $recipes recipes / $((recipes * 3)) ingredients, $rounds rounds (alternating):"
    echo "  orchestrator peak RSS: $(( $(largest "${peaks[@]}") / 1024 )) MB"
}

# The heavyweight store: chefs, and recipes with their chef's name, the catalog and the
# identity sequences (both ways leave them at the largest key); and the backup.
heavyweight_fingerprint() {
    psql "$1" -X -At -v ON_ERROR_STOP=1 -c "
        SELECT (SELECT count(*) || ':' || sum(hashtext(_pk || '|' || name || '|' || coalesce(training, ''))) FROM $store.chef),
               (SELECT count(*) || ':' || sum(hashtext(r._pk || '|' || r.name || '|' || coalesce(r.instructions, '') || '|'
                   || coalesce(r.rating::text, '') || '|' || r.servings || '|' || coalesce(r.temperature_c::text, '') || '|'
                   || coalesce(r.added::text, '') || '|' || coalesce(c.name, '')))
                  FROM $store.recipe r LEFT JOIN $store.chef c ON c._pk = r.chef_pk),
               (SELECT string_agg(sequencename || ' ' || last_value, ',' ORDER BY sequencename) FROM pg_sequences WHERE schemaname = '$store'),
               (SELECT string_agg(conname || ' ' || pg_get_constraintdef(oid), ',' ORDER BY conname)
                  FROM pg_constraint WHERE connamespace = '$store'::regnamespace),
               (SELECT string_agg(indexname, ',' ORDER BY indexname) FROM pg_indexes WHERE schemaname = '$store'),
               (SELECT string_agg(table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, ''),
                   ',' ORDER BY table_name, column_name)
                  FROM information_schema.columns WHERE table_schema = '$store'),
               (SELECT count(*) FROM \"$store~\".recipe)"
}

heavyweight() {
    local model=bench/heavyweight/model small=$((recipes / 10))
    echo
    echo "bench: heavyweight: filling the template store: $recipes recipes, 10000 chefs"
    fill_template bench_heavyweight "$model" "Heavy 1" bench/heavyweight/fill.sql "$recipes"

    local set_based_times=() psql_times=() streaming_times=() streaming_rates=() streaming_cpu=() peaks=() small_peaks=()
    heavyweight_set_based() {
        read -r seconds _ < <(timed "$bin" apply --model "$model" --store "$store" --database-url "$(url_for bench_o)")
        set_based_times+=("$seconds")
    }
    heavyweight_psql() {
        read -r seconds _ < <(timed psql "$(url_for bench_h)" -X -q -v ON_ERROR_STOP=1 -v schema="$store" -f bench/heavyweight/handwritten.sql)
        psql_times+=("$seconds")
    }
    heavyweight_streaming() {
        read -r seconds peak cpu < <(timed "$bin" apply --streaming --model "$model" --store "$store" --database-url "$(url_for bench_s)")
        streaming_times+=("$seconds"); peaks+=("$peak"); streaming_cpu+=("$cpu")
        streaming_rates+=("$(awk -v n="$recipes" -v s="$seconds" 'BEGIN { printf "%.0f", n / s }')")
    }
    local order=(set_based psql streaming)
    for round in $(seq 1 "$heavyweight_rounds"); do
        copies bench_heavyweight bench_o bench_h bench_s
        # Each way takes each place in turn.
        for turn in 0 1 2; do "heavyweight_${order[(turn + round - 1) % 3]}"; done
        same_stores heavyweight_fingerprint "heavyweight round $round: orchestrator (set-based) and the hand-written SQL" bench_o bench_h
        same_stores heavyweight_fingerprint "heavyweight round $round: orchestrator --streaming and the hand-written SQL" bench_s bench_h
        echo "bench: heavyweight round $round: orchestrator ${set_based_times[-1]} s, psql ${psql_times[-1]} s," \
             "orchestrator --streaming ${streaming_times[-1]} s (${streaming_cpu[-1]} s CPU, $((peaks[-1] / 1024)) MB)"
    done

    echo "bench: heavyweight: peak RSS of --streaming at $small recipes"
    fill_template bench_heavyweight "$model" "Heavy 1" bench/heavyweight/fill.sql "$small"
    for round in $(seq 1 "$heavyweight_rounds"); do
        copies bench_heavyweight bench_s
        read -r _ peak _ < <(timed "$bin" apply --streaming --model "$model" --store "$store" --database-url "$(url_for bench_s)")
        small_peaks+=("$peak")
    done
    drop_databases bench_o bench_h bench_s bench_heavyweight

    read -r o_med o_min o_max < <(stats "${set_based_times[@]}")
    read -r p_med p_min p_max < <(stats "${psql_times[@]}")
    read -r s_med s_min s_max < <(stats "${streaming_times[@]}")
    read -r r_med r_min r_max < <(stats "${streaming_rates[@]}")
    read -r c_med c_min c_max < <(stats "${streaming_cpu[@]}")
    local peak=$(( $(largest "${peaks[@]}") / 1024 )) small_peak=$(( $(largest "${small_peaks[@]}") / 1024 ))
    echo
    echo "heavyweight step (Fahrenheit -> Celsius), $recipes recipes / 10000 chefs, $heavyweight_rounds rounds (alternating):"
    echo "  orchestrator apply:             median ${o_med} s (min ${o_min}, max ${o_max}), process start included"
    echo "  hand-written SQL:               median ${p_med} s (min ${p_min}, max ${p_max}), psql start included"
    echo "  orchestrator apply --streaming: median ${s_med} s (min ${s_min}, max ${s_max}), process start included;"
    echo "                                  the orchestrator process used median ${c_med} s of CPU (min ${c_min}, max ${c_max})"
    awk -v o="$o_med" -v p="$p_med" 'BEGIN { printf "  1. ratio set-based / hand-written: %.2f (target <= 0.8)\n", o / p }'
    printf "  2. streaming: median %.0f recipes/s (min %.0f, max %.0f) (target >= 100000)\n" "$r_med" "$r_min" "$r_max"
    awk -v n="$recipes" -v s="$small" -v p="$peak" -v q="$small_peak" \
        'BEGIN { printf "  3. streaming peak RSS: %d MB at %d recipes, %d MB at %d (x%.2f) (target <= 150 MB and flat)\n", q, s, p, n, p / q }'
}

# The positions store: every ingredient's recipe and position, and the ingredient table's
# columns, constraints and indexes.
positions_fingerprint() {
    psql "$1" -X -At -v ON_ERROR_STOP=1 -c "
        SELECT (SELECT count(*) || ':' || sum(hashtext(_pk || '|' || coalesce(recipe_pk, 0) || '|' || coalesce(recipe_order, -1)))
                  FROM $store.ingredient),
               (SELECT string_agg(conname || ' ' || pg_get_constraintdef(oid), ',' ORDER BY conname)
                  FROM pg_constraint WHERE connamespace = '$store'::regnamespace),
               (SELECT string_agg(indexdef, ',' ORDER BY indexname) FROM pg_indexes WHERE schemaname = '$store'),
               (SELECT string_agg(table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, ''),
                   ',' ORDER BY table_name, column_name)
                  FROM information_schema.columns WHERE table_schema = '$store')"
}

positions() {
    echo
    echo "bench: positions: filling the template store: $recipes recipes, $((recipes * 3)) ingredients"
    fill_template bench_positions bench/positions/model "Positions 1" bench/positions/fill.sql "$recipes"
    against_handwritten positions bench_positions bench/positions/model bench/positions/handwritten.sql positions_fingerprint "$positions_rounds"
    ratio_summary "positions (a to-many made ordered), $recipes recipes / $((recipes * 3)) ingredients numbered, $positions_rounds rounds (alternating):"
    echo "  load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
}

# The heavyweight positions store: the positions store's fingerprint, and the identity
# sequences (both ways leave them at the largest key).
heavyweight_positions_fingerprint() {
    positions_fingerprint "$1"
    psql "$1" -X -At -v ON_ERROR_STOP=1 -c "
        SELECT string_agg(sequencename || ' ' || last_value, ',' ORDER BY sequencename) FROM pg_sequences WHERE schemaname = '$store'"
}

heavyweight-positions() {
    local model=bench/positions-heavyweight/model
    echo
    echo "bench: heavyweight positions: filling the template store: $recipes recipes, $((recipes * 3)) ingredients"
    fill_template bench_heavyweight_positions "$model" "Positions 1" bench/positions/fill.sql "$recipes"
    against_handwritten "heavyweight positions" bench_heavyweight_positions "$model" bench/positions-heavyweight/handwritten.sql \
        heavyweight_positions_fingerprint "$positions_rounds"
    ratio_summary "heavyweight positions (stage 2 numbers a to-many made ordered by key), $recipes recipes / $((recipes * 3)) ingredients, $positions_rounds rounds (alternating):"
    echo "  load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
}

for part in $parts; do "$part"; done
