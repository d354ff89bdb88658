#!/usr/bin/env bash
# make bench-fleet: `orchestrator fleet` against one store per process, in one run, with the
# release build, on one server (the stores spread over two databases, each with its own
# orchestrator metadata, as two servers have).
#   status  `fleet status` of BENCH_STATUS_STORES (default 10000) stores at the target
#           (Recipes 3): the time (target: at most 10 s) and the peak RSS.
#   apply   a lightweight step (Recipes 2 -> 3: a rename, a NULL backfill) over BENCH_APPLY_STORES
#           (default 1000) stores: `fleet apply --jobs 4` against `xargs -P 4 orchestrator
#           apply` over identical copies in another database: both times, the ratio (target:
#           at least 10x), peak RSS of fleet apply, and every store of both checked identical.
#   memory  `fleet apply` of the same step over each count of BENCH_MEMORY_STORES (default
#           "1000 5000"; empty: skipped), fresh stores each time: peak RSS and stores/s of each,
#           and the growth of the peak from the first count to the last (target: flat).
# The stores are copies of one filled store made by orchestrator (pg_dump of its schema with
# the name replaced, and its metadata row), loaded by psql; the xargs database is a copy of the
# fleet apply one (CREATE DATABASE … TEMPLATE).
# Needs DATABASE_URL (make bench-fleet provides a throwaway server). BENCH_BIN: an orchestrator
# binary to use instead of this tree's release build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/bench-lib.sh

bench_require_database_url bench-fleet bench-fleet
status_stores="${BENCH_STATUS_STORES:-10000}"
apply_stores="${BENCH_APPLY_STORES:-1000}"
bin="${BENCH_BIN:-$(bench_release_binary)}"
dir=$(mktemp -d)
memory_stores="${BENCH_MEMORY_STORES-1000 5000}"
dbs="fleet_status fleet_a fleet_b fleet_template $(for n in $memory_stores; do printf 'fleet_m%s ' "$n"; done)"
cleanup() {
    rm -rf "$dir"
    for db in $dbs; do admin -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true; done
}
trap cleanup EXIT
for db in $dbs; do admin -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null; done
for db in fleet_status fleet_a fleet_template; do admin -c "CREATE DATABASE $db" >/dev/null; done

# The template store at $1, filled, dumped as $dir/template-$2.sql with its metadata row.
make_template() {
    local version="$1" name="$2" url
    url=$(url_for fleet_template)
    DATABASE_URL="$url" "$bin" apply --quiet --model migrations --store "tmpl_$name" --to "$version"
    psql "$url" -X -q -v ON_ERROR_STOP=1 <<SQL
INSERT INTO tmpl_$name.chef (_entity, name) VALUES ('Chef', 'Ada'), ('Chef', 'Bo');
INSERT INTO tmpl_$name.recipe (_entity, name, rating, chef_pk)
SELECT 'Recipe', 'Recipe ' || n, CASE WHEN n % 2 = 0 AND '$version' <> 'Recipes 3' THEN NULL ELSE n END, (SELECT min(_pk) FROM tmpl_$name.chef) FROM generate_series(1, 5) AS n;
INSERT INTO tmpl_$name.ingredient (_entity, name, recipe_pk)
SELECT 'Ingredient', 'Ingredient ' || n, (SELECT min(_pk) FROM tmpl_$name.recipe) FROM generate_series(1, 8) AS n;
SQL
    pg_dump "$url" --schema="tmpl_$name" --no-owner --no-privileges > "$dir/template-$name.sql"
    psql "$url" -X -q -At -c "SELECT to_jsonb(s) FROM orchestrator.stores s WHERE store = 'tmpl_$name'" > "$dir/meta-$name.json"
}

# Loads $3 copies of template $2 into database $1, named s_00001…
load_copies() {
    local db="$1" name="$2" count="$3" url
    url=$(url_for "$db")
    # The metadata schema, as apply makes it: apply a throwaway store and drop it.
    DATABASE_URL="$url" "$bin" apply --quiet --model migrations --store throwaway
    psql "$url" -X -q -c "SET client_min_messages = warning; DROP SCHEMA throwaway CASCADE; DELETE FROM orchestrator.stores; DELETE FROM orchestrator.migrations;"
    grep -v -e '^SET ' -e '^SELECT pg_catalog.set_config' -e '^--' "$dir/template-$name.sql" > "$dir/body-$name.sql"
    local meta
    meta=$(cat "$dir/meta-$name.json")
    for i in $(seq -f '%05g' 1 "$count"); do
        sed "s/tmpl_$name/s_$i/g" "$dir/body-$name.sql"
        echo "INSERT INTO orchestrator.stores SELECT (jsonb_populate_record(NULL::orchestrator.stores, '$meta'::jsonb || jsonb_build_object('store', 's_$i'))).*;"
    done > "$dir/load-$db.sql"
    psql "$url" -X -q -v ON_ERROR_STOP=1 -f "$dir/load-$db.sql" >/dev/null
    psql "$url" -X -q -c "ANALYZE" >/dev/null
}

# Peak RSS in MB of the command /usr/bin/time -v wrote to $1.
peak_mb() { awk -F': ' '/Maximum resident set size/ { printf "%.1f", $2 / 1024 }' "$1"; }

echo "bench-fleet: binary $bin"
echo "bench-fleet: making the stores (status: $status_stores at Recipes 3; apply: $apply_stores at Recipes 2, twice)"
make_template "Recipes 3" current
make_template "Recipes 2" old
load_copies fleet_status current "$status_stores"
load_copies fleet_a old "$apply_stores"
# Identical copies, file for file.
admin -c "CREATE DATABASE fleet_b TEMPLATE fleet_a" >/dev/null

# --- status ---
printf 'model: %s\nservers:\n  - {name: one, url: "%s"}\n' "$PWD/migrations" "$(url_for fleet_status)" > "$dir/status.yaml"
start=$(date +%s.%N)
/usr/bin/time -v "$bin" fleet status --fleet "$dir/status.yaml" --check > "$dir/status.out" 2> "$dir/status.time"
status_seconds=$(echo "$(date +%s.%N) - $start" | bc)
grep -q "status: $status_stores upToDate" "$dir/status.out" || { echo "bench-fleet: fleet status did not find $status_stores stores up to date:"; cat "$dir/status.out"; exit 1; }
printf 'status: %d stores up to date in %.2f s (target <= 10 s), peak RSS %s MB\n' "$status_stores" "$status_seconds" "$(peak_mb "$dir/status.time")"

# --- apply ---
printf 'model: %s\nservers:\n  - {name: a, url: "%s"}\nperServerJobs: 4\n' "$PWD/migrations" "$(url_for fleet_a)" > "$dir/apply.yaml"
start=$(date +%s.%N)
/usr/bin/time -v "$bin" fleet apply --fleet "$dir/apply.yaml" --jobs 4 --run bench > "$dir/apply.out" 2> "$dir/apply.time"
fleet_seconds=$(echo "$(date +%s.%N) - $start" | bc)
tail -n 1 "$dir/apply.out" | grep -q "run bench: $apply_stores stores: $apply_stores migrated" || { echo "bench-fleet: fleet apply did not migrate every store:"; tail -n 5 "$dir/apply.out"; exit 1; }

start=$(date +%s.%N)
seq -f 's_%05g' 1 "$apply_stores" | DATABASE_URL="$(url_for fleet_b)" xargs -P 4 -I{} "$bin" apply --quiet --model migrations --store {}
xargs_seconds=$(echo "$(date +%s.%N) - $start" | bc)

printf 'apply: %d stores (Recipes 2 -> 3): fleet apply --jobs 4 %.2f s (%.0f stores/s), xargs -P 4 apply %.2f s (%.0f stores/s): %.1fx (target >= 10x); fleet apply peak RSS %s MB\n' \
    "$apply_stores" "$fleet_seconds" "$(echo "$apply_stores / $fleet_seconds" | bc -l)" "$xargs_seconds" "$(echo "$apply_stores / $xargs_seconds" | bc -l)" \
    "$(echo "$xargs_seconds / $fleet_seconds" | bc -l)" "$(peak_mb "$dir/apply.time")"

# Every store of both databases: its rows, columns, and the version its metadata records.
for db in fleet_a fleet_b; do
    psql "$(url_for "$db")" -X -q -At -v ON_ERROR_STOP=1 > "$dir/$db.fingerprint" <<'SQL'
CREATE FUNCTION pg_temp.rows(schema text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE t text; result text := ''; part text;
BEGIN
    FOR t IN SELECT tablename FROM pg_tables WHERE schemaname = schema ORDER BY tablename LOOP
        EXECUTE format('SELECT coalesce(string_agg(x::text, ''|'' ORDER BY x::text), '''') FROM %I.%I AS x', schema, t) INTO part;
        result := result || t || ':' || part || ';';
    END LOOP;
    RETURN md5(result || (SELECT string_agg(table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, ''), ',' ORDER BY table_name, column_name)
                          FROM information_schema.columns WHERE table_schema = schema));
END $$;
-- One statement (so one transaction, holding its locks) per store: a single statement over
-- thousands of stores runs out of max_locks_per_transaction.
SELECT format('SELECT %L || '' '' || %L || '' '' || pg_temp.rows(%L)', store, version_name, store) FROM orchestrator.stores ORDER BY store
\gexec
SQL
done
if ! cmp -s "$dir/fleet_a.fingerprint" "$dir/fleet_b.fingerprint"; then
    echo "bench-fleet: the stores fleet apply migrated differ from those apply migrated:"
    diff "$dir/fleet_a.fingerprint" "$dir/fleet_b.fingerprint" | head -n 10
    exit 1
fi
[ "$(grep -c ' Recipes 3 ' "$dir/fleet_a.fingerprint")" -eq "$apply_stores" ] || { echo "bench-fleet: not every store is at Recipes 3"; exit 1; }
echo "results: every one of the $apply_stores stores identical (rows, columns, version) after fleet apply and after apply"

# --- memory ---
first_mb=""
for n in $memory_stores; do
    admin -c "CREATE DATABASE fleet_m$n" >/dev/null
    load_copies "fleet_m$n" old "$n"
    printf 'model: %s\nservers:\n  - {name: m, url: "%s"}\nperServerJobs: 4\n' "$PWD/migrations" "$(url_for "fleet_m$n")" > "$dir/memory.yaml"
    start=$(date +%s.%N)
    /usr/bin/time -v "$bin" fleet apply --fleet "$dir/memory.yaml" --jobs 4 --run memory > "$dir/memory.out" 2> "$dir/memory.time"
    seconds=$(echo "$(date +%s.%N) - $start" | bc)
    tail -n 1 "$dir/memory.out" | grep -q "run memory: $n stores: $n migrated" || { echo "bench-fleet: fleet apply did not migrate every store:"; tail -n 5 "$dir/memory.out"; exit 1; }
    mb=$(peak_mb "$dir/memory.time")
    first_mb=${first_mb:-$mb}
    printf 'memory: fleet apply of %d stores: peak RSS %s MB (%+.0f%% from the first count), %.2f s (%.0f stores/s)\n' \
        "$n" "$mb" "$(echo "($mb - $first_mb) * 100 / $first_mb" | bc -l)" "$seconds" "$(echo "$n / $seconds" | bc -l)"
    admin -c "DROP DATABASE fleet_m$n WITH (FORCE)" >/dev/null
done
