# SPDX-License-Identifier: Apache-2.0
# The suite's accounting, sourced by test/run-all.sh (and tested by test/harness/suite_test.sh).
# Counters: passed, failed, skipped; failures: what failed, for the summary. With FAILURE_TAILS set
# to a file, each failing test's last lines of output are appended there.
passed=0 failed=0 skipped=0
failures=()

suite_pass() { passed=$(( passed + 1 )); }
suite_fail() { failed=$(( failed + 1 )); failures+=("$*"); echo "run-all: FAILED: $*"; }

# junit_results REPORT: one line per test case of a CTest JUnit report, "pass|NAME", "skip|NAME"
# or "fail|NAME". A case passes only with status "run"; "notrun" is a skip only when its reason is
# SKIP_RETURN_CODE (a test that exited with its declared skip code). Anything else that did not run
# (a failed fixture, a disabled test, a case with no status) is a failure.
junit_results() {
  awk '
    function flush(kind) { if (name != "") print kind "|" name; name = "" }
    /<testcase / {
      if (name != "") flush("fail")
      match($0, /name="[^"]*"/); name = substr($0, RSTART + 6, RLENGTH - 7)
      if ($0 ~ /status="run"/) flush("pass")
      else if ($0 ~ /status="fail"/) flush("fail")
      next
    }
    name != "" && /<skipped message="SKIP_RETURN_CODE=/ { flush("skip"); next }
    name != "" && /<skipped/ { flush("fail") }
    END { if (name != "") flush("fail") }' "$1"
}

# The awk function that undoes the XML escapes of a CTest JUnit report (names and output).
junit_unescape_awk='function unescape(s) {
  gsub(/&lt;/, "<", s); gsub(/&gt;/, ">", s); gsub(/&quot;/, "\"", s); gsub(/&apos;/, "\047", s)
  gsub(/&amp;/, "\\&", s); return s
}'

# junit_failure_tails REPORT LINES: for each failing test case of a CTest JUnit report, a
# "--- NAME" header and the last LINES lines of its output, so a summary says why, not only which
# (CI shows a run's last lines; ctest's own output of a failure is far above them).
junit_failure_tails() {
  awk -v n="$2" "$junit_unescape_awk"'
    function flush(   i) {
      if (name != "" && (status == "fail" || (status != "run" && !skip))) {
        print "--- " name
        for (i = (k > n ? k - n + 1 : 1); i <= k; i++) print "    " out[i]
        if (k == 0) print "    (no output)"
      }
      name = ""; k = 0
    }
    /<testcase / {
      flush()
      match($0, /name="[^"]*"/); name = unescape(substr($0, RSTART + 6, RLENGTH - 7))
      status = match($0, /status="[^"]*"/) ? substr($0, RSTART + 8, RLENGTH - 9) : ""
      skip = 0; inout = 0; next
    }
    name != "" && /<skipped message="SKIP_RETURN_CODE=/ { skip = 1 }
    name != "" && !inout && /<system-out>/ { inout = 1; sub(/.*<system-out>/, "") }
    inout {
      last = sub(/<\/system-out>.*/, "")
      if (!last || $0 != "") out[++k] = unescape($0)
      if (last) inout = 0
      next
    }
    /<\/testcase>/ { flush() }
    END { flush() }' "$1"
}

# count_junit REPORT EXPECTED RC WHAT: adds one ctest run's results to the counters. Tests missing
# from the report (a crashed or killed ctest, no report at all), and a non-zero ctest status with no
# failing test, are failures too.
count_junit() {
  local report=$1 expected=$2 rc=$3 what=$4 p=0 f=0 s=0 kind name
  if [ -s "$report" ]; then
    while IFS='|' read -r kind name; do
      case $kind in
        pass) p=$(( p + 1 )) ;;
        skip) s=$(( s + 1 )); echo "run-all: skipped: $name" ;;
        *) f=$(( f + 1 )); failures+=("$what: $name") ;;
      esac
    done < <(junit_results "$report")
    if [ "$f" -gt 0 ] && [ -n "${FAILURE_TAILS:-}" ]; then
      junit_failure_tails "$report" "${FAILURE_TAIL_LINES:-25}" >>"$FAILURE_TAILS"
    fi
  fi
  passed=$(( passed + p )); failed=$(( failed + f )); skipped=$(( skipped + s ))
  echo "run-all: $what: $p passed, $f failed, $s skipped of $expected"
  if [ $(( p + f + s )) -lt "$expected" ]; then
    suite_fail "$what: $(( expected - p - f - s )) of $expected tests have no result (ctest exit $rc)"
  elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    suite_fail "$what: ctest exited $rc with no failing test recorded"
  fi
}

# junit_times REPORT: "NAME<TAB>SECONDS" for each test case of a CTest JUnit report that ran.
junit_times() {
  awk "$junit_unescape_awk"'
    /<testcase / {
      if (!match($0, /name="[^"]*"/)) next; name = substr($0, RSTART + 6, RLENGTH - 7)
      if (!match($0, / time="[^"]*"/)) next; t = substr($0, RSTART + 7, RLENGTH - 8)
      printf "%s\t%d\n", unescape(name), t + 0.5 }' "$1"
}

# run_ctest BUILD_DIR LABEL JOBS WHAT: runs one label's tests and keeps going on failure, so the
# summary reports every failure of the run. With TIMES_OUT set, each test's time is appended there.
run_ctest() {
  local dir=$1 label=$2 n=$3 what=$4 expected report rc=0
  expected=$(ctest --test-dir "$dir" -N -L "$label" | sed -n 's/^Total Tests: //p')
  if [ -z "$expected" ] || [ "$expected" -eq 0 ]; then
    suite_fail "$what: ctest lists no $label tests"
    return 0
  fi
  report=$(mktemp /tmp/asop-junit.XXXXXX)
  ctest --test-dir "$dir" -L "$label" --output-on-failure -j "$n" --timeout 1500 \
    --output-junit "$report" || rc=$?
  count_junit "$report" "$expected" "$rc" "$what"
  if [ -n "${TIMES_OUT:-}" ] && [ -s "$report" ]; then
    junit_times "$report" | sed "s/^/$what\t/" >>"$TIMES_OUT"
  fi
  rm -f "$report"
}

# format_check: clang-format over every C++ file git knows of; fails when there is none to check,
# or git cannot list them (a check that checked nothing must not pass).
format_check() {
  local sources files
  if ! sources=$(git ls-files -co --exclude-standard -- '*.cpp' '*.h'); then
    echo "format: git ls-files failed, so nothing could be checked"
    return 1
  fi
  if [ -z "$sources" ]; then
    echo "format: git ls-files listed no C++ file"
    return 1
  fi
  mapfile -t files <<<"$sources"
  clang-format --dry-run -Werror "${files[@]}" || { echo "format: run 'clang-format -i' on the files above"; return 1; }
  echo "clang-format: ${#files[@]} files formatted"
  # catch_discover_tests registers names through a CMake list: a ';' splits one test into two
  # that match nothing. A name starting with '~' is read by Catch as "every test but this one":
  # its ctest entry runs the whole suite. Catch such names here, before a build.
  local bad
  if bad=$(perl -0777 -ne 'print "$ARGV: $1\n" while /TEST_CASE\(\s*"(~[^"]*|[^"]*;[^"]*)"/g' "${files[@]}") &&
    [ -n "$bad" ]; then
    echo "format: a test name holds ';' (CMake splits it) or starts with '~' (Catch excludes it):"
    echo "$bad"
    return 1
  fi
}
