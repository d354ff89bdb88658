#!/usr/bin/env bash
# Times the switch-over of `apply --online` for an entity moved out of its hierarchy (Dog
# leaves Animal's table for its own) on a store of ROWS animals, half of them dogs, each
# dog with an owner and every tenth owner with a favourite dog. Prints the switch-over
# transaction's duration, from the `--verbose` log (BEGIN to COMMIT of the last phase).
#   DATABASE_URL=postgres://… ROWS=200000 scripts/bench-row-move.sh [BIN]
# BIN defaults to .build/debug/orchestrator; the database `rowmove_bench` (BENCH_DB) is created and
# dropped. PLAN=1 prints `plan --online` first, SHOW=1 the switch-over's statements.
# REFERENCED=1 adds ROWS/2 toys, each linked to an animal (a dog for half of them): a foreign
# key of the destination then points at the table Dog leaves.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bench-lib.sh"
bench_scratch_database rowmove_bench "${1:-}"
bench_model_folder Pets
owner='  Owner:
    attributes: {name: {type: string}}
    relationships:
      dogs: {destination: Dog, inverse: owner, toMany: true}
      favourite: {destination: Dog}'
dog='    relationships: {owner: {destination: Owner, inverse: dogs}}'
if [ -n "${REFERENCED:-}" ]; then owner="$owner
  Toy:
    attributes: {label: {type: string}}
    relationships: {animal: {destination: Animal}}"; fi
printf 'entities:\n  Animal: {attributes: {name: {type: string}}}\n  Dog:\n    parent: Animal\n    attributes: {bark: {type: string}}\n%s\n%s\n' "$dog" "$owner" > "$dir/Pets/Pets 1.yaml"
printf 'entities:\n  Animal: {attributes: {name: {type: string}}}\n  Dog:\n    attributes: {name: {type: string}, bark: {type: string}}\n%s\n%s\n' "$dog" "$owner" > "$dir/Pets/Pets 2.yaml"
"$BIN" apply --database-url "$URL" --model "$dir/Pets" --store pets --to "Pets 1" --quiet
psql -q "$URL" >/dev/null <<SQL
INSERT INTO pets.owner (_entity, name) SELECT 'Owner', 'owner ' || i FROM generate_series(1, $ROWS / 10) i;
INSERT INTO pets.animal (_entity, name, bark, owner_pk)
SELECT CASE WHEN i % 2 = 0 THEN 'Dog' ELSE 'Animal' END, 'animal ' || i,
       CASE WHEN i % 2 = 0 THEN 'woof' END, CASE WHEN i % 2 = 0 THEN 1 + i % ($ROWS / 10) END
FROM generate_series(1, $ROWS) i;
UPDATE pets.owner SET favourite_pk = 2 * _pk WHERE _pk % 10 = 0;
\\if ${REFERENCED:-0}
INSERT INTO pets.toy (_entity, label, animal_pk) SELECT 'Toy', 'toy ' || i, i FROM generate_series(1, $ROWS / 2) i;
\\endif
VACUUM ANALYZE;
SQL
if [ -n "${PLAN:-}" ]; then "$BIN" plan --database-url "$URL" --model "$dir/Pets" --store pets --online; fi
started=$(date +%s%N)
"$BIN" apply --database-url "$URL" --model "$dir/Pets" --store pets --online --verbose 2> "$dir/log" >/dev/null
elapsed=$(( ($(date +%s%N) - started) / 1000000 ))
# The switch-over is the last transaction: from its BEGIN to its COMMIT; "store" is its part
# before the metadata is written (the statements on the store's tables, under their locks).
awk '/^sql: / { ms = $2 + 0; if ($0 ~ /: BEGIN$/) { total = 0; n = 0; store = -1 } total += ms; n++ }
     /DELETE FROM "orchestrator"."online_progress"/ { store = total - ms }
     /: COMMIT$/ { last = total; laststore = store; statements = n }
     END { printf "rows=%d switch-over: %.1f ms in all (%d statements), %.1f ms before the metadata; apply --online: %d ms\n", '"$ROWS"', last, statements, laststore, '"$elapsed"' }' "$dir/log"
bench_show_switch_over "$dir/log"
