#!/usr/bin/env bash
# Builds a PostgreSQL 15 image from Debian's packages, for machines that reach no image registry.
#
#   scripts/containers/build-image.sh RUNTIME TAG
#
# RUNTIME is podman or docker, TAG e.g. localhost/orchestrator-postgres:15. Steps:
#   1. mmdebstrap --variant=minbase --include=postgresql-15 bookworm, from the Debian mirror apt
#      already uses here (APT sources; DEBIAN_MIRROR overrides it), into a tarball in a temp
#      folder; the package's default cluster, docs and man pages are left out, and the entry
#      point (postgres-entrypoint.sh, the official image's contract) is copied in.
#   2. RUNTIME import, with the PATH, PGDATA, entry point and stop signal of the official image.
# The tarball is deleted afterwards; only the image stays. About 80 s and 480 MB here.
set -euo pipefail

me="build-image"
runtime="${1:?usage: build-image.sh RUNTIME TAG}"
tag="${2:?usage: build-image.sh RUNTIME TAG}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# The first Debian (not security) mirror in apt's sources: deb822 .sources files, then the
# one-line format.
debian_mirror() {
    if [ -n "${DEBIAN_MIRROR:-}" ]; then
        printf '%s\n' "$DEBIAN_MIRROR"
        return
    fi
    local uri
    uri="$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null \
        | awk 'tolower($1) == "uris:" { for (i = 2; i <= NF; i++) print $i }' \
        | grep -v -- '-security' | grep '/debian/\?$' | head -n 1 || true)"
    if [ -z "$uri" ]; then
        uri="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
            | awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }' \
            | grep -v -- '-security' | grep '/debian/\?$' | head -n 1 || true)"
    fi
    printf '%s\n' "${uri:-http://deb.debian.org/debian}"
}

command -v mmdebstrap >/dev/null || { echo "$me: mmdebstrap is missing (apt-get install mmdebstrap)" >&2; exit 1; }
mirror="$(debian_mirror)"
work="$(mktemp -d "${TMPDIR:-/tmp}/orchestrator-image.XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "$me: building $tag from Debian bookworm's postgresql-15 ($mirror)" >&2
start=$SECONDS
attempt=1
# The mirror is the only network this needs; one retry covers a dropped connection.
until timeout 900 mmdebstrap --quiet --variant=minbase --include=postgresql-15 \
        --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
        --customize-hook='rm -rf "$1/var/lib/postgresql/15" "$1/etc/postgresql/15"' \
        --customize-hook="copy-in $here/postgres-entrypoint.sh /usr/local/bin" \
        --customize-hook='mkdir -p "$1/var/lib/postgresql/data" "$1/var/run/postgresql" && chroot "$1" chown postgres:postgres /var/lib/postgresql/data /var/run/postgresql' \
        bookworm "$work/rootfs.tar" "$mirror" > "$work/mmdebstrap.log" 2>&1; do
    if [ "$attempt" -ge 2 ]; then
        echo "$me: mmdebstrap failed twice; the end of its log:" >&2
        tail -n 30 "$work/mmdebstrap.log" >&2
        exit 1
    fi
    attempt=$((attempt + 1))
    echo "$me: mmdebstrap failed, retrying once" >&2
    rm -f "$work/rootfs.tar"
done

timeout 600 "$runtime" import \
    --change 'ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV PGDATA=/var/lib/postgresql/data' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'ENTRYPOINT ["/usr/local/bin/postgres-entrypoint.sh"]' \
    --change 'CMD ["postgres"]' \
    --change 'EXPOSE 5432' \
    --change 'STOPSIGNAL SIGINT' \
    "$work/rootfs.tar" "$tag" >/dev/null
echo "$me: built $tag in $((SECONDS - start)) s ($(du -m "$work/rootfs.tar" | cut -f1) MB)" >&2
