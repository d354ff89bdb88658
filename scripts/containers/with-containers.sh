#!/usr/bin/env bash
# Run a command with PostgreSQL 15 in containers: what `make test` runs the tests with.
#
#   scripts/containers/with-containers.sh CMD [ARGS...]
#
# 1. The runtime and image (runtime.sh): Docker when its engine answers, else Podman (installed
#    with apt-get when missing); POSTGRES_IMAGE, else postgres:15 when a registry has it, else
#    an image built once from Debian's packages and reused (localhost/orchestrator-postgres:15).
# 2. Unless DATABASE_URL is set, one server for the suites' fresh databases: a container
#    published on a loopback address only (127.0.0.2:5432, else the next free one), superuser
#    postgres with a random password, encoding UTF8 and locale C, durability off (throwaway
#    data): as scripts/with-postgres.sh's server.
# 3. The command runs with DATABASE_URL, ORCHESTRATOR_CONTAINER_RUNTIME, POSTGRES_IMAGE and
#    ORCHESTRATOR_TEST_RUN (the label of every container of this run: the topology suites start
#    their own, Tests/TestSupport/Containers) in its environment.
# 4. Afterwards, always (EXIT/INT/TERM/HUP), every container labelled with this run is removed
#    with its volumes; so are those of earlier runs whose process is gone. The image stays.
#
# Where no container can run, the command runs with scripts/with-postgres.sh instead (servers
# from the installed binaries), and says so; under CI=true that is a failure instead.
# ORCHESTRATOR_SERVER_NOTE=FILE: one line saying what served the tests is written there (the
# summary line of make test prints it).
set -euo pipefail

me="with-containers"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=runtime.sh
source "$here/runtime.sh"

if [ $# -eq 0 ]; then
    echo "usage: $0 CMD [ARGS...]" >&2
    exit 2
fi

note() {
    if [ -n "${ORCHESTRATOR_SERVER_NOTE:-}" ]; then printf '%s\n' "$1" > "$ORCHESTRATOR_SERVER_NOTE"; fi
}

fall_back() {
    if [ "${CI:-}" = true ]; then
        echo "$me: error: $why. Under CI=true the tests run against PostgreSQL in containers only (no fallback)." >&2
        note "no containers: $why"
        exit 1
    fi
    echo "$me: $why; falling back to a PostgreSQL server from the installed binaries (scripts/with-postgres.sh)" >&2
    note "PostgreSQL from the host's binaries (scripts/with-postgres.sh), not containers: $why"
    exec bash "$here/../with-postgres.sh" "$@"
}

run="$$-$(date +%s)"
label="orchestrator.test-run"
child=""
started=0

remove_containers() { # FILTER...
    local ids
    ids="$(timeout 60 "$runtime" ps -aq "$@" 2>/dev/null || true)"
    [ -n "$ids" ] || return 0
    # shellcheck disable=SC2086 # one id per word
    timeout 120 "$runtime" rm -f -v $ids >/dev/null 2>&1 \
        || { sleep 2; timeout 120 "$runtime" rm -f -v $ids >/dev/null 2>&1; } \
        || echo "$me: warning: could not remove containers $(printf '%s' "$ids" | tr '\n' ' ')" >&2
}

# Containers of runs whose process is gone (a make test killed with SIGKILL).
remove_stale_containers() {
    local line container owner
    while read -r container line; do
        owner="${line%%-*}"
        case "$owner" in ''|*[!0-9]*) continue ;; esac
        kill -0 "$owner" 2>/dev/null || remove_containers --filter "id=$container"
    done < <(timeout 60 "$runtime" ps -a --filter "label=$label" --format "{{.ID}} {{index .Labels \"$label\"}}" 2>/dev/null || true)
}

cleanup() {
    local rc=$?
    trap - EXIT INT TERM HUP
    if [ "$started" -eq 1 ]; then
        remove_containers --filter "label=$label=$run"
    fi
    exit "$rc"
}
on_signal() {
    trap - INT TERM HUP
    if [ -n "$child" ]; then
        kill -TERM "$child" 2>/dev/null || true
        wait "$child" 2>/dev/null || true
    fi
    exit "$1"
}

choose_runtime || fall_back "$@"
choose_image || fall_back "$@"
echo "$me: $runtime_version, image $image" >&2

trap cleanup EXIT
trap 'on_signal 130' INT
trap 'on_signal 143' TERM
trap 'on_signal 129' HUP
started=1
remove_stale_containers

address_in_use() { (exec 3<>"/dev/tcp/$1/5432") 2>/dev/null; }

# Starts the suites' server on the first free loopback address from 127.0.0.2; sets $address.
start_main_server() {
    local name="orchestrator-test-$run-main" n output
    for n in $(seq 2 40); do
        address="127.0.0.$n"
        address_in_use "$address" && continue
        timeout 60 "$runtime" rm -f -v "$name" >/dev/null 2>&1 || true
        if output="$(timeout 180 "$runtime" run -d --name "$name" --label "$label=$run" --shm-size=1g \
                -p "$address:5432:5432" -e POSTGRES_PASSWORD="$password" \
                -e POSTGRES_INITDB_ARGS="--encoding=UTF8 --locale=C" "$image" \
                -c fsync=off -c synchronous_commit=off -c full_page_writes=off 2>&1)"; then
            return 0
        fi
        # Another process took the address between the check and the bind: the next one.
        if printf '%s' "$output" | grep -qiE 'address already in use|bind'; then
            continue
        fi
        why="$runtime run $image failed: $(printf '%s' "$output" | tail -n 3 | tr '\n' ' ')"
        return 1
    done
    why="no free loopback address from 127.0.0.2 to 127.0.0.40 for port 5432"
    return 1
}

# Waits (at most 180 s) until the server answers a query with the password.
wait_until_ready() {
    local name="orchestrator-test-$run-main" deadline=$((SECONDS + 180)) state
    while [ "$SECONDS" -lt "$deadline" ]; do
        if PGPASSWORD="$password" PGCONNECT_TIMEOUT=5 timeout 20 psql -X -q -At -h "$address" -p 5432 -U postgres -d postgres \
                -c 'SELECT 1' >/dev/null 2>&1; then
            return 0
        fi
        state="$(timeout 30 "$runtime" inspect -f '{{.State.Status}}' "$name" 2>/dev/null || echo unknown)"
        if [ "$state" != running ] && [ "$state" != created ] && [ "$state" != unknown ]; then
            why="the server's container is $state; the end of its log: $(timeout 30 "$runtime" logs --tail 10 "$name" 2>&1 | tr '\n' ' ')"
            return 1
        fi
        sleep 0.5
    done
    why="the server on $address:5432 did not answer within 180 s; the end of its log: $(timeout 30 "$runtime" logs --tail 10 "$name" 2>&1 | tr '\n' ' ')"
    return 1
}

if [ -z "${DATABASE_URL:-}" ]; then
    password="$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')"
    attempt=1
    until start_main_server && wait_until_ready; do
        remove_containers --filter "label=$label=$run"
        # A runtime can fail once for reasons of its own (a lock, a network set up late).
        if [ "$attempt" -ge 2 ]; then
            fall_back "$@"
        fi
        echo "$me: $why; retrying once" >&2
        attempt=$((attempt + 1))
        sleep 3
    done
    export DATABASE_URL="postgres://postgres:${password}@${address}:5432/postgres"
    echo "$me: postgres in container orchestrator-test-$run-main on $address:5432 (throwaway)" >&2
    note "PostgreSQL in containers: $runtime_version, image $image"
else
    note "PostgreSQL at DATABASE_URL; topology suites in containers: $runtime_version, image $image"
fi

export ORCHESTRATOR_CONTAINER_RUNTIME="$runtime" POSTGRES_IMAGE="$image" ORCHESTRATOR_TEST_RUN="$run"

status=0
if { true <&0; } 2>/dev/null; then
    "$@" <&0 &
else
    "$@" &
fi
child=$!
wait "$child" || status=$?
child=""
exit "$status"
