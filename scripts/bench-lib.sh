# Sourced by the scripts/bench*.sh: the checks, helpers and clean-up they share.
# Functions only; nothing runs when it is sourced. Bash, with `set -euo pipefail` in the caller.

# Exits 64 unless DATABASE_URL is a postgres:// URL without ?parameters (database names are
# put in its place); exits 1 when it is unset. $1: the script's name, $2: the make target
# that provides a throwaway server.
bench_require_database_url() {
    : "${DATABASE_URL:?DATABASE_URL must be set (try: make $2)}"
    case "$DATABASE_URL" in
        postgres://*|postgresql://*) ;;
        *) echo "$1: DATABASE_URL must be a postgres:// URL" >&2; exit 64 ;;
    esac
    [[ "$DATABASE_URL" != *\?* ]] || { echo "$1: DATABASE_URL must not carry ?parameters" >&2; exit 64; }
    export PGOPTIONS="-c client_min_messages=warning"
}

# Exits 64 unless each of BENCH_PARTS ($3…) is one of the parts the script has ($2, a list).
bench_require_parts() {
    local me="$1" known="$2" part
    shift 2
    for part in "$@"; do
        [[ " $known " == *" $part "* ]] || { echo "$me: BENCH_PARTS: unknown part '$part' (${known// /, })" >&2; exit 64; }
    done
}

# The URL of database $1 on DATABASE_URL's server.
url_for() { echo "${DATABASE_URL%/*}/$1"; }

# psql on DATABASE_URL's database, stopping at the first error.
admin() { psql "$DATABASE_URL" -X -q -v ON_ERROR_STOP=1 "$@"; }

# Builds orchestrator for release and prints the binary's path.
bench_release_binary() {
    swift build -c release ${SWIFTPM_FLAGS:-} >/dev/null || return
    echo "$(swift build -c release ${SWIFTPM_FLAGS:-} --show-bin-path)/orchestrator"
}

# For the switch-over benches (BIN, default .build/debug/orchestrator, from $2; ROWS, default
# 20000): the scratch database BENCH_DB (default $1) on DATABASE_URL's server, created empty,
# and a temporary folder; both go when the script exits. Sets BIN, ROWS, BASE (DATABASE_URL),
# DB, URL (the scratch database's) and dir (the folder).
bench_scratch_database() {
    BIN=${2:-.build/debug/orchestrator}
    ROWS=${ROWS:-20000}
    BASE=${DATABASE_URL:?DATABASE_URL must name a PostgreSQL server}
    DB=${BENCH_DB:-$1}
    URL="${BASE%/*}/$DB"
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"; psql -q "$BASE" -c "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true' EXIT
    psql -q "$BASE" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" >/dev/null 2>&1
}

# The model folder "$dir/$1" of two versions, "$1 1" and "$1 2" (current), whose YAML files the
# caller writes.
bench_model_folder() {
    mkdir "$dir/$1"
    printf 'name: %s\nversions: [%s 1, %s 2]\ncurrent: %s 2\n' "$1" "$1" "$1" "$1" > "$dir/$1/model.yaml"
}

# With SHOW set: the statements of the last transaction in `apply --verbose`'s log $1 (the
# switch-over), with their times.
bench_show_switch_over() {
    if [ -n "${SHOW:-}" ]; then awk '/: BEGIN$/ { buf = "" } { buf = buf $0 "\n" } END { printf "%s", buf }' "$1"; fi
}
