#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The suite's accounting (test/lib/suite.sh) and the e2e helpers that guard it cannot report green
# for something that did not pass: each case below is a way a run could lie.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d /tmp/asop-harness.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
problems=0
check() {  # check WHAT WANT GOT
  if [ "$2" = "$3" ]; then echo "ok: $1 ($3)"; else echo "FAIL: $1: want '$2', got '$3'"; problems=$(( problems + 1 )); fi
}
source "$root/test/lib/suite.sh"
reset() { passed=0 failed=0 skipped=0 failures=(); }

# A real CTest project: the outcomes a suite meets.
mkdir -p "$tmp/proj"
cat >"$tmp/proj/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(harness NONE)
enable_testing()
add_test(NAME passes COMMAND true)
add_test(NAME fails COMMAND false)
add_test(NAME skips COMMAND sh -c "echo 'SKIP: no engine'; exit 77")
set_tests_properties(skips PROPERTIES SKIP_RETURN_CODE 77)
# Prints the old skip marker but fails: a failure, whatever it printed.
add_test(NAME says_skip_but_fails COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/says_skip.sh)
add_test(NAME setup_fails COMMAND false)
set_tests_properties(setup_fails PROPERTIES FIXTURES_SETUP thing)
add_test(NAME needs_setup COMMAND true)
set_tests_properties(needs_setup PROPERTIES FIXTURES_REQUIRED thing)
add_test(NAME times_out COMMAND sleep 30)
set_tests_properties(times_out PROPERTIES TIMEOUT 1)
set_property(TEST passes fails skips says_skip_but_fails setup_fails needs_setup times_out
             PROPERTY LABELS demo)
CMAKE
cat >"$tmp/proj/says_skip.sh" <<'SH'
echo first; echo '<a> & "b"'; echo 'SKIP: not really'; exit 1
SH
cmake -S "$tmp/proj" -B "$tmp/proj/b" >/dev/null || { echo "FAIL: cmake"; exit 1; }

reset
run_ctest "$tmp/proj/b" demo 2 demo >"$tmp/out" 2>&1
check "real ctest: passed" 1 "$passed"
check "real ctest: failed (fails, says_skip_but_fails, setup_fails, needs_setup, times_out)" 5 "$failed"
check "real ctest: skipped" 1 "$skipped"

# Each test's time lands in TIMES_OUT under the run's name (test/run-all.sh --list reads it).
reset
TIMES_OUT=$tmp/times run_ctest "$tmp/proj/b" demo 2 demo >"$tmp/out" 2>&1
check "times: one line per test that ran" 7 "$(grep -c $'^demo\t' "$tmp/times")"
check "times: the timed-out test took its second" 1 "$(awk -F'\t' '$2 == "times_out" {print $3}' "$tmp/times")"

# Each failing test's last lines land in FAILURE_TAILS, unescaped; a pass or a skip adds none.
reset
FAILURE_TAILS=$tmp/tails FAILURE_TAIL_LINES=2 run_ctest "$tmp/proj/b" demo 2 demo >"$tmp/out" 2>&1
check "tails: a header per failing test" 5 "$(grep -c '^--- ' "$tmp/tails")"
check "tails: none for a pass or a skip" 0 "$(grep -c -e '^--- passes$' -e '^--- skips$' "$tmp/tails")"
check "tails: the failing test's own words" 1 "$(grep -c '^    SKIP: not really$' "$tmp/tails")"
check "tails: only the last lines" 2 "$(sed -n '/^--- says_skip_but_fails$/,/^--- /p' "$tmp/tails" | grep -c '^    ')"
check "tails: XML escapes undone" 1 "$(grep -c '^    <a> & "b"$' "$tmp/tails")"

reset
run_ctest "$tmp/proj/b" no-such-label 2 empty >"$tmp/out" 2>&1
check "a label with no tests is a failure" 1 "$failed"

reset
count_junit "$tmp/absent.xml" 7 137 killed >"$tmp/out" 2>&1
check "a killed ctest with no report: failure" 1 "$failed"
check "... and nothing passed" 0 "$passed"

# A report that lists fewer tests than ctest should have run (a crash mid-run).
printf '<testsuite>\n<testcase name="a" status="run">\n</testcase>\n</testsuite>\n' >"$tmp/short.xml"
reset
count_junit "$tmp/short.xml" 3 0 short >"$tmp/out" 2>&1
check "tests missing from the report: failure" "1 1" "$passed $failed"

reset
count_junit "$tmp/short.xml" 1 2 "non-zero exit" >"$tmp/out" 2>&1
check "ctest exit 2 with every test passed: failure" "1 1" "$passed $failed"

# The format check: outside a git work tree, git ls-files fails; that must not pass.
mkdir -p "$tmp/nogit"
(cd "$tmp/nogit" && GIT_CEILING_DIRECTORIES=$tmp format_check >/dev/null 2>&1)
check "format check without git ls-files fails" 1 "$?"

# A test name with ';' would be split by catch_discover_tests into two tests that run nothing.
mkdir -p "$tmp/semi" && git -C "$tmp/semi" init -q
printf 'TEST_CASE("a, then b; c", "[x]") {}\n' >"$tmp/semi/a_test.cpp"
(cd "$tmp/semi" && format_check >/dev/null 2>&1)
check "a test name holding ';' fails the format check" 1 "$?"
mkdir -p "$tmp/tilde" && git -C "$tmp/tilde" init -q
printf 'TEST_CASE("~/.kube/config last", "[x]") {}\n' >"$tmp/tilde/a_test.cpp"
(cd "$tmp/tilde" && format_check >/dev/null 2>&1)
check "a test name starting with '~' fails the format check" 1 "$?"

# The e2e helpers: a missing metric is not "no writes"; a required Docker engine is not a skip.
(
  export KUBECONFIG=/nonexistent
  source "$root/test/e2e/lib/common.sh"
  metrics() { echo 'controller_runtime_reconcile_total{controller="appservice"} 3'; }
  writes 1
) >/dev/null 2>&1
check "writes fails when rest_client_requests_total is missing" 1 "$?"
got=$(
  export KUBECONFIG=/nonexistent
  source "$root/test/e2e/lib/common.sh"
  metrics() { printf '%s\n' 'rest_client_requests_total{code="200",method="GET"} 9' 'rest_client_requests_total{code="201",method="POST"} 2' 'rest_client_requests_total{code="200",method="PATCH"} 3'; }
  writes 1
)
check "writes counts what is not GET" 5 "$got"
mkdir -p "$tmp/bin"
printf '#!/bin/sh\necho "Cannot connect to the Docker daemon" >&2\nexit 1\n' >"$tmp/bin/docker"
chmod +x "$tmp/bin/docker"
(
  export KUBECONFIG=/nonexistent PATH="$tmp/bin:$PATH" REQUIRE_DOCKER=1
  source "$root/test/e2e/lib/common.sh"
  require_docker
) >/dev/null 2>&1
check "REQUIRE_DOCKER=1 and a broken engine: failure (exit 1)" 1 "$?"
(
  export KUBECONFIG=/nonexistent PATH="$tmp/bin:$PATH" REQUIRE_DOCKER=0
  source "$root/test/e2e/lib/common.sh"
  require_docker
) >/dev/null 2>&1
check "no engine, not required: skip (exit 77)" 77 "$?"

[ "$problems" = 0 ] || { echo "harness: $problems problem(s)"; exit 1; }
echo "PASS: harness"
