#!/usr/bin/env bash
# Runs a command with its output (stdout and stderr) written to a file, and shows the file as
# it grows.
#
#   scripts/run-logged.sh LOG CMD [ARGS...]
#
# Why not `CMD 2>&1 | tee LOG`: every process of the command shares the pipe's write end, and
# O_NONBLOCK is a property of that shared open file. Once any of them sets it, a write that
# meets a full pipe (tee waiting on a slow terminal or CI log) fails with EAGAIN and its line
# is gone, from the log too: a `make test` log once lacked the result lines of 82 tests that
# passed. A regular file never refuses a write, so the log is whole; `tail -f` shows it, and a
# slow reader only delays the display.
#
# The command runs in the foreground (Ctrl-C reaches it); its exit code is returned once the
# display has caught up with the end of the log.
set -uo pipefail

log="${1:?usage: run-logged.sh LOG CMD [ARGS...]}"
shift
[ $# -gt 0 ] || { echo "usage: run-logged.sh LOG CMD [ARGS...]" >&2; exit 2; }

: > "$log"
# tail follows the log until `keeper` is gone, then prints what is left and ends. The keeper
# is stopped with SIGKILL: the signals a caller blocked stay blocked in its children (a test
# runner's threads block SIGTERM), and SIGKILL cannot be blocked.
sleep 2147483647 &
keeper=$!
tail -n +1 -f --pid="$keeper" "$log" &
display=$!
finish() {
    kill -KILL "$keeper" 2>/dev/null
    wait "$display" 2>/dev/null
}
trap finish EXIT

status=0
"$@" > "$log" 2>&1 || status=$?
exit "$status"
