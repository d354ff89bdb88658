# Sourced by with-containers.sh: finds (or installs) the container runtime and the PostgreSQL
# image. Every runtime command runs under `timeout`; each function returns non-zero with the
# reason in $why.
#
#   choose_runtime   sets $runtime (podman or docker) and $runtime_version:
#                    ORCHESTRATOR_CONTAINER_RUNTIME when set; else Docker when its engine
#                    answers; else Podman, installed with apt-get when missing (podman, runc,
#                    containernetworking-plugins, iptables, mmdebstrap). For Podman,
#                    CONTAINERS_CONF defaults to scripts/containers/containers.conf.
#   choose_image     sets $image: POSTGRES_IMAGE when set (pulled when missing); else
#                    postgres:15 when present or pullable; else the image built from Debian's
#                    packages (localhost/orchestrator-postgres:15), built once and reused.

containers_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
local_image="localhost/orchestrator-postgres:15"
why=""

# apt-get update, then apt-get install PACKAGES; twice before giving up.
apt_install() {
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 || { why="$* missing, and installing needs root or sudo"; return 1; }
        sudo=(sudo)
    fi
    echo "$me: installing $* with apt-get" >&2
    local attempt
    for attempt in 1 2; do
        if timeout 600 "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 \
            && timeout 900 "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2; then
            return 0
        fi
        echo "$me: apt-get failed (attempt $attempt of 2)" >&2
        sleep 5
    done
    why="apt-get could not install $*"
    return 1
}

choose_runtime() {
    runtime="${ORCHESTRATOR_CONTAINER_RUNTIME:-}"
    if [ -z "$runtime" ]; then
        if command -v docker >/dev/null 2>&1 && timeout 20 docker info >/dev/null 2>&1; then
            runtime=docker
        else
            runtime=podman
            if ! command -v podman >/dev/null 2>&1 || ! command -v runc >/dev/null 2>&1; then
                apt_install podman runc containernetworking-plugins iptables mmdebstrap || return 1
            fi
        fi
    fi
    command -v "$runtime" >/dev/null 2>&1 || { why="$runtime is not installed"; return 1; }
    if [ "$(basename "$runtime")" = podman ]; then
        export CONTAINERS_CONF="${CONTAINERS_CONF:-$containers_dir/containers.conf}"
    fi
    local info
    if ! info="$(timeout 60 "$runtime" info 2>&1)"; then
        why="\`$runtime info\` failed: $(printf '%s' "$info" | tail -n 3 | tr '\n' ' ')"
        return 1
    fi
    runtime_version="$(timeout 30 "$runtime" --version 2>/dev/null | head -n 1 || true)"
    return 0
}

image_present() { timeout 60 "$runtime" image inspect "$1" >/dev/null 2>&1; }

# A registry that cannot be reached fails fast (DNS); a slow one gets 10 minutes.
pull() {
    local output
    output="$(timeout 600 "$runtime" pull "$1" 2>&1)" && return 0
    why="could not pull $1: $(printf '%s' "$output" | tail -n 1)"
    return 1
}

choose_image() {
    if [ -n "${POSTGRES_IMAGE:-}" ]; then
        image="$POSTGRES_IMAGE"
        image_present "$image" || pull "$image" || return 1
        return 0
    fi
    for image in docker.io/library/postgres:15 "$local_image"; do
        image_present "$image" && return 0
    done
    image=docker.io/library/postgres:15
    if pull "$image"; then
        return 0
    fi
    echo "$me: no registry reachable ($why); building $local_image from Debian's packages" >&2
    image="$local_image"
    if ! command -v mmdebstrap >/dev/null 2>&1; then
        apt_install mmdebstrap || return 1
    fi
    if ! bash "$containers_dir/build-image.sh" "$runtime" "$image"; then
        why="building $image from Debian's packages failed"
        return 1
    fi
    return 0
}
