#!/bin/bash
# Entry point of the PostgreSQL image built from Debian's packages (scripts/containers/build-image.sh).
# It keeps the contract of the official postgres image that docker-compose.yml and the tests rely
# on, so either image serves:
#   - POSTGRES_PASSWORD (required unless POSTGRES_HOST_AUTH_METHOD=trust), POSTGRES_USER
#     (default postgres), POSTGRES_INITDB_ARGS, PGDATA (default /var/lib/postgresql/data);
#   - an empty PGDATA is initialised once (initdb), a PGDATA that holds a cluster is started as
#     it is (a restarted container recovers its own data);
#   - arguments starting with `-` are options of `postgres`; any other command runs as given.
# The server listens on every address of the container, port 5432; host connections use
# scram-sha-256 (trust with POSTGRES_HOST_AUTH_METHOD=trust), local ones trust.
set -euo pipefail

if [ "${1:0:1}" = "-" ]; then
    set -- postgres "$@"
fi
if [ "$1" != "postgres" ]; then
    exec "$@"
fi

export PGDATA="${PGDATA:-/var/lib/postgresql/data}"

if [ "$(id -u)" = 0 ]; then
    mkdir -p "$PGDATA" /var/run/postgresql
    chown postgres:postgres "$PGDATA" /var/run/postgresql
    chmod 700 "$PGDATA"
    exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi

if [ ! -s "$PGDATA/PG_VERSION" ]; then
    method="${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}"
    if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "$method" != trust ]; then
        echo "postgres-entrypoint: POSTGRES_PASSWORD is not set (or set POSTGRES_HOST_AUTH_METHOD=trust)" >&2
        exit 1
    fi
    pwfile="$(mktemp)"
    printf '%s\n' "${POSTGRES_PASSWORD:-}" > "$pwfile"
    # shellcheck disable=SC2086 # POSTGRES_INITDB_ARGS is a list of options, as in the official image
    initdb -D "$PGDATA" -U "${POSTGRES_USER:-postgres}" --pwfile="$pwfile" \
        --auth-local=trust --auth-host="$method" -E UTF8 --locale=C.UTF-8 ${POSTGRES_INITDB_ARGS:-} >/dev/null
    rm -f "$pwfile"
    printf 'host all all all %s\n' "$method" >> "$PGDATA/pg_hba.conf"
    echo "listen_addresses = '*'" >> "$PGDATA/postgresql.conf"
    echo "postgres-entrypoint: initialised $PGDATA" >&2
fi

exec "$@"
