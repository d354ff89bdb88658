#!/usr/bin/env bash
# Install what building and testing orchestrator needs on Debian 12, with
# apt-get, only when something is missing:
#   - libpq-dev    (libpq headers; found through pkg-config by SwiftPM)
#   - pkg-config
#   - postgresql   (server: initdb/pg_ctl, used by scripts/with-postgres.sh)
#   - postgresql-client (psql, used by scripts/demo.sh)
#   - make
# When everything is present apt is not touched at all. Runs as root (CI) or
# through sudo when available.
set -euo pipefail

me="install-deps"

have_initdb() {
    command -v initdb >/dev/null 2>&1 && return 0
    local f
    for f in /usr/lib/postgresql/*/bin/initdb; do
        [ -x "$f" ] && return 0
    done
    return 1
}

missing=()
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists libpq; then
    missing+=(libpq-dev)
fi
have_initdb || missing+=(postgresql)
command -v psql >/dev/null 2>&1 || missing+=(postgresql-client)
command -v make >/dev/null 2>&1 || missing+=(make)

if [ "${#missing[@]}" -eq 0 ]; then
    echo "$me: all present (libpq via pkg-config, PostgreSQL server, psql, make)"
    exit 0
fi

echo "$me: installing ${missing[*]}"

if [ "$(id -u)" -eq 0 ]; then
    sudo=()
elif command -v sudo >/dev/null 2>&1; then
    sudo=(sudo)
else
    echo "$me: need root (or sudo) to apt-get install ${missing[*]}" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
# The postgresql package may create and start a default 'main' cluster on
# 5432; scripts/with-postgres.sh does not use it (own server, own port).
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends "${missing[@]}"

# Check that it worked.
pkg-config --exists libpq || { echo "$me: libpq still not found by pkg-config" >&2; exit 1; }
have_initdb || { echo "$me: initdb still not found" >&2; exit 1; }
echo "$me: done"
