#!/usr/bin/env bash
# Times `apply --online` for a to-many made ordered (Recipe.ingredients numbered by `_pk`
# within each recipe) on a store of ROWS recipes with 3 ingredients each, against plain
# `apply` on a copy of the same store, and prints the switch-over transaction's duration from
# the `--verbose` log (BEGIN to COMMIT of the last phase): it renumbers only the recipes
# logged during the last pass, so it should not grow with ROWS.
#   DATABASE_URL=postgres://… ROWS=100000 scripts/bench-positions.sh [BIN]
# BIN defaults to .build/debug/orchestrator; the database `positions_bench` (`BENCH_DB`) is created and
# dropped. SHOW=1 prints the switch-over's statements with their times.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bench-lib.sh"
bench_scratch_database positions_bench "${1:-}"
bench_model_folder Recipes
for v in 1 2; do
  ordered=$([ "$v" = 2 ] && echo true || echo false)
  printf 'entities:\n  Recipe:\n    attributes: {name: {type: string}}\n    relationships: {ingredients: {destination: Ingredient, inverse: recipe, toMany: true, ordered: %s}}\n  Ingredient:\n    attributes: {name: {type: string}}\n    relationships: {recipe: {destination: Recipe, inverse: ingredients}}\n' "$ordered" > "$dir/Recipes/Recipes $v.yaml"
done
for store in online plain; do
  "$BIN" apply --database-url "$URL" --model "$dir/Recipes" --store $store --to "Recipes 1" --quiet
  psql -q "$URL" >/dev/null <<SQL
INSERT INTO $store.recipe (_entity, name) SELECT 'Recipe', 'recipe ' || i FROM generate_series(1, $ROWS) i;
-- Ingredients inserted round-robin over the recipes, so each recipe's links are spread out.
INSERT INTO $store.ingredient (_entity, name, recipe_pk) SELECT 'Ingredient', 'ingredient ' || i, 1 + i % $ROWS FROM generate_series(1, 3 * $ROWS) i;
VACUUM ANALYZE;
SQL
done
started=$(date +%s%N)
"$BIN" apply --database-url "$URL" --model "$dir/Recipes" --store plain --quiet
plain=$(( ($(date +%s%N) - started) / 1000000 ))
started=$(date +%s%N)
"$BIN" apply --database-url "$URL" --model "$dir/Recipes" --store online --online --verbose 2> "$dir/log" >/dev/null
elapsed=$(( ($(date +%s%N) - started) / 1000000 ))
same=$(psql -qAt "$URL" -c "SELECT count(*) FROM online.ingredient o FULL JOIN plain.ingredient p USING (_pk) WHERE o.recipe_order IS DISTINCT FROM p.recipe_order OR o._pk IS NULL OR p._pk IS NULL")
awk '/^sql: / { ms = $2 + 0; if ($0 ~ /: BEGIN$/) { total = 0; n = 0 } total += ms; n++ }
     /: COMMIT$/ { last = total; statements = n }
     END { printf "rows=%d apply: %d ms; apply --online: %d ms; switch-over: %.1f ms (%d statements)\n", '"$ROWS"', '"$plain"', '"$elapsed"', last, statements }' "$dir/log"
echo "positions differing from plain apply: $same"
bench_show_switch_over "$dir/log"
