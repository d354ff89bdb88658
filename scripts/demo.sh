#!/usr/bin/env bash
# A demo of the orchestrator CLI on the versioned model folder migrations/
# (Recipes: "Recipes 1", "Recipes 2", "Recipes 3"; store schema `recipes`).
#
# Needs DATABASE_URL; run it through the Makefile (`make demo`) or
#   scripts/with-postgres.sh bash scripts/demo.sh
# It writes to the database: use a throwaway one.
#
# ORCHESTRATOR=/path/to/orchestrator overrides the binary (default: the one in
# `swift build --show-bin-path`, with $SWIFTPM_FLAGS).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

: "${DATABASE_URL:?DATABASE_URL must be set (try: make demo)}"
export DATABASE_URL

model="migrations"
schema="${DEMO_SCHEMA:-recipes}"

if [ -z "${ORCHESTRATOR:-}" ]; then
    # shellcheck disable=SC2086  # SWIFTPM_FLAGS is a list of options
    ORCHESTRATOR="$(swift build ${SWIFTPM_FLAGS:-} --show-bin-path)/orchestrator"
fi
if [ ! -x "$ORCHESTRATOR" ]; then
    echo "demo: no orchestrator binary at $ORCHESTRATOR (run: swift build)" >&2
    exit 1
fi

header() {
    echo
    echo "==> $*"
}

# The arguments, quoted for display when they need it: --to "Recipes 1".
shown() {
    local a out=""
    for a in "$@"; do
        case "$a" in
            *[![:alnum:]_./=:-]*|"") out+=" \"$a\"" ;;
            *) out+=" $a" ;;
        esac
    done
    printf '%s' "${out# }"
}

# Run a step, echoing it first. Fails the demo on a non-zero exit.
step() {
    header "orchestrator $(shown "$@")"
    "$ORCHESTRATOR" "$@"
}

# Like step, but exit code 1 is accepted too (any other non-zero code still
# fails the demo). Used ONLY for `status` and `plan` while the store is out of
# date (at "Recipes 1", the current version is "Recipes 3"): they may report
# that with exit code 1, which is the expected outcome here, not a failure.
step_out_of_date() {
    local rc=0
    step "$@" || rc=$?
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
        echo "demo: orchestrator $1 exited with $rc" >&2
        exit "$rc"
    fi
    [ "$rc" -eq 0 ] || echo "(exit code 1: the store is not at the current version, as expected)"
}

psql_demo() {
    psql "$DATABASE_URL" -X -v ON_ERROR_STOP=1 "$@"
}

step validate --model "$model"
step hash --model "$model"
step plan --model "$model" --to "Recipes 1"
step apply --model "$model" --to "Recipes 1"

header "psql: insert a chef, a recipe and its ingredients into schema $schema"
psql_demo -q <<SQL
BEGIN;
INSERT INTO "$schema".chef (_entity, name)
VALUES ('Chef', 'Julia');

INSERT INTO "$schema".recipe (_entity, name, instructions, chef_pk)
SELECT 'Recipe', 'Ratatouille', 'Slice, fry separately, then bake together.', c._pk
FROM "$schema".chef c WHERE c.name = 'Julia';

INSERT INTO "$schema".ingredient (_entity, name, amount, recipe_pk)
SELECT 'Ingredient', i.name, i.amount, r._pk
FROM "$schema".recipe r,
     (VALUES ('Aubergine', '1'), ('Courgette', '2'), ('Tomato', '4'), ('Olive oil', '3 tbsp')) AS i(name, amount)
WHERE r.name = 'Ratatouille';
COMMIT;
SQL

header "psql: the rows"
psql_demo -c "
SELECT c._pk AS chef_pk, c.name AS chef, r._pk AS recipe_pk, r.name AS recipe,
       i._pk AS ingredient_pk, i.name AS ingredient, i.amount
FROM \"$schema\".chef c
JOIN \"$schema\".recipe r ON r.chef_pk = c._pk
JOIN \"$schema\".ingredient i ON i.recipe_pk = r._pk
ORDER BY i._pk"

# The store is at "Recipes 1", the model's current version is "Recipes 3".
step_out_of_date status --model "$model"
step plan --model "$model"
step plan --model "$model" --format json

# Lightweight migration in place: instructions renamed directions, rating backfilled with 0,
# Cuisine added.
step apply --model "$model"
step status --model "$model"

header "psql: the same rows at Recipes 3"
psql_demo -c "SELECT _pk, name, directions, rating, cuisine_pk FROM \"$schema\".recipe ORDER BY _pk"
psql_demo -c "SELECT to_version, kind, outcome, rows, duration_ms FROM orchestrator.migrations ORDER BY id"

# Heavyweight: Examples/people moves each person's street and city into an Address shared by
# everyone living there, by a custom policy (PersonSplit). The plain executable stops at plan,
# naming it; orchestrator-with-policies (Examples/PolicyExample, docs/custom-policies.md)
# registers it and runs the mapping model in passes, printing progress.
people="Examples/people"
with_policies="$(dirname "$ORCHESTRATOR")/orchestrator-with-policies"
step apply --model "$people" --to "People 1"
header "psql: six people at three addresses"
psql_demo -q -c "
INSERT INTO people.person (name, street, city) VALUES
  ('Ada', '1 Main St', 'Springfield'), ('Bea', '1 Main St', 'Springfield'), ('Cy', '2 Elm St', 'Springfield'),
  ('Dee', '2 Elm St', 'Shelbyville'), ('Eve', '2 Elm St', 'Shelbyville'), ('Flo', '1 Main St', 'Springfield')"
step plan --model "$people"
header "orchestrator-with-policies plan --model $people"
"$with_policies" plan --model "$people" | grep -E '^(store|-- pass|-- hazard|cannot)'
header "orchestrator-with-policies apply --model $people"
"$with_policies" apply --model "$people"
header "psql: people and their addresses at People 2; the old store kept as people~"
psql_demo -c "SELECT p.name, a.street, a.city, a._pk AS address_pk FROM people.person p JOIN people.address a ON a._pk = p.address_pk ORDER BY p.name"
psql_demo -c "SELECT count(*) AS people_in_backup FROM \"people~\".person"

# The pipeline (docs/workflow.md) on a second Recipes store: save the plan on the pull request,
# review it as SQL, rehearse it, and on deploy apply exactly the saved plan.
pipeline_store="${schema}_pipeline"
plan_file="$(mktemp "${TMPDIR:-/tmp}/orchestrator-plan.XXXXXX")"
trap 'rm -f "$plan_file"' EXIT
header "pipeline: store $pipeline_store at Recipes 1, with a recipe"
"$ORCHESTRATOR" apply --model "$model" --store "$pipeline_store" --to "Recipes 1" >/dev/null
psql_demo -q -c "INSERT INTO \"$pipeline_store\".recipe (_entity, name, instructions) VALUES ('Recipe', 'Pistou', 'Pound the basil.')"
step plan --model "$model" --store "$pipeline_store" --out "$plan_file"
header "orchestrator plan --model $model --store $pipeline_store --format sql (first lines)"
"$ORCHESTRATOR" plan --model "$model" --store "$pipeline_store" --format sql | sed -n '1,12p'
step apply --model "$model" --store "$pipeline_store" --plan "$plan_file" --dry-run
step apply --model "$model" --store "$pipeline_store" --plan "$plan_file"

echo
echo "==> demo done"
