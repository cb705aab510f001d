#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Under pipefail (every test script sets it), a pipeline ending in a reader that stops early
# (grep -q, grep -m, head) fails at random: the writer gets SIGPIPE if it writes after the reader
# left, and the pipeline takes the writer's status. In an `if` that is the wrong branch; in an
# assignment under set -e, a silent exit (drain_test failed CI that way, with no output). Read the
# whole input instead: `grep PATTERN >/dev/null`, `sed -n 1p`. Comment lines and `sh -c` strings
# (dash, no pipefail) are exempt.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
# scan FILE...: each line holding a pipe into an early-stopping reader.
scan() {
  grep -nHE '\|[[:space:]]*(grep[[:space:]]+(-[a-zA-Z]*[qm][a-zA-Z0-9]*|--quiet|--silent|--max-count)|h[e]ad)([[:space:]]|$|\))' "$@" |
    grep -vE '^[^:]+:[0-9]+:[[:space:]]*#' | grep -v 'sh -c' || true
}

# The scan itself finds what it must and nothing else.
tmp=$(mktemp -d /tmp/asop-pipes.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/bad.sh" <<'SH'
x=$(kubectl get pods | head -n 1)
if nm -D bin | grep -qw sym; then :; fi
readelf -d bin | grep -m1 RELR
curl -s url | grep --quiet word
SH
cat >"$tmp/good.sh" <<'SH'
x=$(kubectl get pods | sed -n 1p)
if nm -D bin | grep -w sym >/dev/null; then :; fi
# a comment may say: curl | grep -q
eventually 30 sh -c "kubectl get events | grep -q ."
grep -q word file
SH
found=$(scan "$tmp/bad.sh" | wc -l)
[ "$found" = 4 ] || { echo "FAIL: the scan found $found of 4 bad pipelines"; exit 1; }
found=$(scan "$tmp/good.sh")
[ -z "$found" ] || { echo "FAIL: the scan flagged good lines: $found"; exit 1; }

# This file is left out: its examples above are bad on purpose.
mapfile -t files < <(git ls-files '*.sh' .ci/run ':!test/packaging/pipe_readers_test.sh')
[ ${#files[@]} -gt 0 ] || { echo "FAIL: git ls-files listed no script"; exit 1; }
bad=$(scan "${files[@]}")
if [ -n "$bad" ]; then
  echo "FAIL: pipelines into a reader that stops early (under pipefail they fail at random):"
  echo "$bad"
  exit 1
fi
echo "PASS: ${#files[@]} scripts, no pipeline into grep -q, grep -m or head"
