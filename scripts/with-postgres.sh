#!/usr/bin/env bash
# Run a command with DATABASE_URL pointing at a PostgreSQL server.
#
#   scripts/with-postgres.sh CMD [ARGS...]
#
# If DATABASE_URL is already set (and non-empty), the command is exec'd as is.
# Otherwise a throwaway server is started:
#   - data, unix socket and log in a fresh `mktemp -d` under /tmp,
#   - listening on 127.0.0.1 only, on a free port,
#   - initdb --auth-local=trust --auth-host=scram-sha-256, superuser `postgres`
#     with a random password generated for this run,
#   - run as the `postgres` user when invoked as root (PostgreSQL refuses root),
# DATABASE_URL=postgres://postgres:<pw>@127.0.0.1:<port>/postgres is exported,
# the command runs (as the invoking user), and the server is ALWAYS stopped and
# the folder deleted afterwards (EXIT/INT/TERM/HUP). The command's exit code is
# propagated.
#
# Optional: PG_BINDIR=/path/to/postgresql/bin to choose the server binaries
# (default: the dir of `initdb` on PATH, else the highest
# /usr/lib/postgresql/*/bin).
set -euo pipefail

me="with-postgres"

if [ $# -eq 0 ]; then
    echo "usage: $0 CMD [ARGS...]" >&2
    exit 2
fi

if [ -n "${DATABASE_URL:-}" ]; then
    exec "$@"
fi

# --- locate the server binaries ---------------------------------------------
find_bindir() {
    if [ -n "${PG_BINDIR:-}" ]; then
        printf '%s\n' "$PG_BINDIR"
        return 0
    fi
    local initdb
    if initdb="$(command -v initdb 2>/dev/null)"; then
        dirname "$(readlink -f "$initdb")"
        return 0
    fi
    local d
    d="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
    if [ -n "$d" ] && [ -x "$d/initdb" ]; then
        printf '%s\n' "$d"
        return 0
    fi
    return 1
}

if ! bindir="$(find_bindir)" || [ ! -x "$bindir/initdb" ] || [ ! -x "$bindir/pg_ctl" ]; then
    echo "$me: no PostgreSQL server binaries (initdb, pg_ctl) found;" \
         "run scripts/install-deps.sh or set PG_BINDIR" >&2
    exit 1
fi

# --- who runs the server ------------------------------------------------------
if [ "$(id -u)" -eq 0 ]; then
    if ! id postgres >/dev/null 2>&1; then
        echo "$me: running as root but there is no 'postgres' user" \
             "(install the postgresql package: scripts/install-deps.sh)" >&2
        exit 1
    fi
    as_pg() { runuser -u postgres -- "$@"; }
else
    as_pg() { "$@"; }
fi

# --- temp folder and cleanup --------------------------------------------------
# /tmp (not $TMPDIR): the postgres user must be able to reach it, and the unix
# socket path must stay short (< 108 bytes).
tmp="$(mktemp -d /tmp/orchestrator-pg.XXXXXX)"
data="$tmp/data"
log="$tmp/server.log"
started=0
child=""

cleanup() {
    local rc=$?
    trap - EXIT INT TERM HUP
    if [ "$started" -eq 1 ]; then
        # Subshell + cd: pg_ctl as postgres must not sit in an unreadable cwd.
        ( cd "$tmp" && as_pg "$bindir/pg_ctl" -D "$data" -m fast -w -t 30 stop ) >/dev/null 2>&1 \
            || ( cd "$tmp" && as_pg "$bindir/pg_ctl" -D "$data" -m immediate -w -t 30 stop ) >/dev/null 2>&1 \
            || [ ! -f "$data/postmaster.pid" ] \
            || echo "$me: warning: could not stop the server in $data" >&2
    fi
    rm -rf "$tmp"
    exit "$rc"
}
on_signal() {
    # Asynchronous commands of a non-interactive shell ignore SIGINT, so the
    # child is always asked to stop with SIGTERM.
    trap - INT TERM HUP
    if [ -n "$child" ]; then
        kill -TERM "$child" 2>/dev/null || true
        wait "$child" 2>/dev/null || true
    fi
    exit "$1"
}
trap cleanup EXIT
trap 'on_signal 130' INT
trap 'on_signal 143' TERM
trap 'on_signal 129' HUP

if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$tmp"
fi
chmod 700 "$tmp"

# --- initdb -------------------------------------------------------------------
password="$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')"
pwfile="$tmp/pwfile"
( umask 077; printf '%s\n' "$password" > "$pwfile" )
[ "$(id -u)" -eq 0 ] && chown postgres: "$pwfile"

if ! ( cd "$tmp" && as_pg "$bindir/initdb" -D "$data" -U postgres --pwfile="$pwfile" \
        --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C --no-sync ) \
        > "$tmp/initdb.log" 2>&1; then
    echo "$me: initdb failed:" >&2
    tail -n 30 "$tmp/initdb.log" >&2
    exit 1
fi
rm -f "$pwfile"

# --- start on a free port -----------------------------------------------------
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

port=""
for attempt in 1 2 3 4 5 6 7 8 9 10; do
    candidate=$(( 20000 + (RANDOM * 32768 + RANDOM) % 40000 ))
    port_in_use "$candidate" && continue
    : > "$log"
    [ "$(id -u)" -eq 0 ] && chown postgres: "$log"
    # Throwaway data: durability is switched off for speed.
    if ( cd "$tmp" && as_pg "$bindir/pg_ctl" -D "$data" -l "$log" -w -t 60 \
            -o "-c listen_addresses=127.0.0.1 -p $candidate -k $tmp -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
            start ) > "$tmp/pg_ctl.log" 2>&1; then
        port="$candidate"
        started=1
        break
    fi
    # Someone took the port between the check and the bind: try another one.
    if grep -qiE 'could not bind|address already in use|could not create any TCP/IP sockets|lock file .* already exists' "$log"; then
        ( cd "$tmp" && as_pg "$bindir/pg_ctl" -D "$data" -m immediate -w stop ) >/dev/null 2>&1 || true
        continue
    fi
    break
done

if [ -z "$port" ]; then
    # pg_ctl -w may have timed out with a server still coming up.
    started=1
    echo "$me: the PostgreSQL server failed to start; tail of its log:" >&2
    tail -n 30 "$log" >&2 2>/dev/null || true
    tail -n 10 "$tmp/pg_ctl.log" >&2 2>/dev/null || true
    exit 1
fi

version="$("$bindir/postgres" --version 2>/dev/null | awk '{print $3}' || true)"
echo "$me: postgres ${version:+$version }on 127.0.0.1:$port (throwaway, data in $data, socket dir $tmp)" >&2

export DATABASE_URL="postgres://postgres:${password}@127.0.0.1:${port}/postgres"

# --- run the command ------------------------------------------------------------
# In the background so that INT/TERM reach our traps at once (a foreground
# child would delay them until it ends). Keep stdin: a background command's
# stdin would otherwise be /dev/null.
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
