#!/usr/bin/env bash
# Summarise a `swift test` log (Swift Testing and XCTest output).
#
#   scripts/test-summary.sh LOG [EXIT_CODE [SERVERS_FILE]]
#
# Prints one line, e.g.
#   make test: 57 tests ran (Swift Testing: 57 ran, 56 passed, 0 failed, 1 skipped; XCTest: 0 ran, 0 failed, 0 skipped); swift test exit 0
# ending with "; " and the first line of SERVERS_FILE when it has one (what served the tests,
# written by scripts/containers/with-containers.sh: the container runtime and image, or why the
# host's binaries did),
# and warnings when a framework's closing line is missing, nothing ran, or the per-test lines
# do not add up to the closing line's count (lines lost from the log).
# Always exits 0: the caller decides pass/fail from swift test's exit code.
set -uo pipefail

log="${1:?usage: test-summary.sh LOG [EXIT_CODE]}"
code="${2:-?}"
servers=""
if [ -n "${3:-}" ] && [ -s "$3" ]; then
    servers="$(head -n 1 "$3")"
fi

# Strip ANSI colours, then count. Swift Testing lines start with a symbol:
#   ✔ Test foo() passed after 0.001 seconds.
#   ✘ Test foo() failed after 0.001 seconds with 1 issue.
#   ➜ Test foo() skipped: "reason"      (the symbol differs between versions)
#   ✔ Test run with 57 tests in 12 suites passed after 3.2 seconds.
#   ✘ Test run with 57 tests in 12 suites failed after 3.2 seconds with 2 issues.
# The closing line's count is every test started or skipped. When it passed, each of them
# passed or was skipped; when the per-test lines say otherwise, some were lost from the log
# (it happened once, in a contiguous stretch), so the counts printed are the closing line's,
# with a warning. Failures seen ("✘ Test … failed") always count.
# XCTest's total is the "Executed" line after "Test Suite 'All tests'" (the
# last "Executed" line when that header is missing):
#   Executed 3 tests, with 1 test skipped and 1 failure (0 unexpected) in ...
sed 's/\x1b\[[0-9;]*m//g' "$log" | awk -v code="$code" -v servers="$servers" '
    /^[^ ]+ Test run with [0-9]+ tests?/ {
        st_seen = 1
        s = $0; sub(/.*Test run with /, "", s); split(s, w, " "); st_ran = w[1] + 0
        st_result = ($0 ~ /failed after/) ? "failed" : "passed"
        next
    }
    /^[^ ]+ Test .* passed after [0-9.]+ seconds?/ { st_pass++; next }
    /^[^ ]+ Test .* failed after [0-9.]+ seconds?/ { st_fail++; next }
    /^[^ ]+ Test .* skipped(\.|:|$)/               { st_skip++; next }
    /^Test Suite .All tests. (passed|failed)/      { all_tests = 1; next }
    /Executed [0-9]+ tests?, with/ {
        if (xc_final) next
        s = $0; sub(/.*Executed /, "", s); split(s, w, " "); xc_ran = w[1] + 0
        xc_skip = 0; xc_fail = 0
        if (match($0, /with [0-9]+ tests? skipped/)) { split(substr($0, RSTART + 5), w, " "); xc_skip = w[1] + 0 }
        if (match($0, /[0-9]+ failures?/))          { split(substr($0, RSTART), w, " "); xc_fail = w[1] + 0 }
        xc_seen = 1
        if (all_tests) xc_final = 1
        next
    }
    END {
        st_ran += 0; st_pass += 0; st_fail += 0; st_skip += 0
        xc_ran += 0; xc_fail += 0; xc_skip += 0
        lines = st_pass + st_fail + st_skip
        if (st_seen && lines != st_ran) {
            seen = sprintf("%d passed, %d failed, %d skipped", st_pass, st_fail, st_skip)
            if (st_result == "passed" && lines < st_ran) {
                # Every test the closing line counts passed or was skipped.
                st_pass = st_ran - st_fail - st_skip
                mismatch = sprintf("Swift Testing'"'"'s closing line says %d tests passed, but the log holds the result lines of only %d (%s): %d lost from the log; the counts above are the closing line'"'"'s", st_ran, lines, seen, st_ran - lines)
            } else if (lines < st_ran) {
                mismatch = sprintf("Swift Testing'"'"'s closing line says %d tests ran and the run failed, but the log holds the result lines of only %d (%s): the results of %d are not in the log", st_ran, lines, seen, st_ran - lines)
            } else {
                mismatch = sprintf("Swift Testing'"'"'s closing line says %d tests ran, but the log holds %d result lines (%s)", st_ran, lines, seen)
            }
        }
        printf "make test: %d tests ran (Swift Testing: %d ran, %d passed, %d failed, %d skipped; XCTest: %d ran, %d failed, %d skipped); swift test exit %s%s\n", \
            st_ran + xc_ran, st_ran, st_pass, st_fail, st_skip, xc_ran, xc_fail, xc_skip, code, (servers == "" ? "" : "; " servers)
        if (mismatch != "") print "make test: warning: " mismatch
        if (st_result == "failed" && st_fail == 0) print "make test: warning: Swift Testing'"'"'s closing line says the run failed, but no \"✘ Test … failed\" line is in the log"
        if (!st_seen) print "make test: warning: no Swift Testing \"Test run with N tests\" line in the log (build failure or crash?)"
        if (!xc_seen) print "make test: warning: no XCTest \"Executed N tests\" line in the log"
        if (st_ran + xc_ran == 0) print "make test: warning: no tests ran"
    }
'
exit 0
