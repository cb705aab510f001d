#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine (as root): installs what is missing, builds
# the Release and Sanitize (ASan+UBSan) builds, checks formatting, runs unit tests in both builds,
# runs the fuzz targets for a bounded time, brings up a local control plane, runs the e2e tests,
# and tears everything down. Exits non-zero on any failure and leaves no process behind.
#
# Environment: FUZZ_SECONDS (default 30 per target), E2E=0 to skip the control plane and e2e tests.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
export PATH=$PATH:/usr/local/go/bin
jobs=$(nproc)
passed=0 failed=0
section() { echo; echo "=== $* ($(date +%T))"; }

# count_ctest LOG: adds ctest's totals to the suite's.
count_ctest() {
  local line total nfail
  line=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$1" | tail -n1) || return 0
  nfail=$(sed -E 's/.* ([0-9]+) tests? failed.*/\1/' <<<"$line")
  total=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$line")
  passed=$(( passed + total - nfail )); failed=$(( failed + nfail ))
}
# run_ctest BUILD_DIR LABEL: runs one label's tests and keeps going on failure, so the summary
# reports every failure of the run.
run_ctest() {
  local log
  log=$(mktemp)
  ctest --test-dir "$1" -L "$2" --output-on-failure -j "${3:-$jobs}" --timeout 900 2>&1 | tee "$log" || true
  count_ctest "$log"
  rm -f "$log"
}

section "dependencies"
bash test/deps.sh

section "format (clang-format)"
mapfile -t sources < <(git ls-files -co --exclude-standard -- '*.cpp' '*.h')
if [ ${#sources[@]} -gt 0 ] && ! clang-format --dry-run -Werror "${sources[@]}"; then
  echo "clang-format: the files above need 'clang-format -i'"; failed=$(( failed + 1 ))
else
  passed=$(( passed + 1 ))
fi

section "build Release and Sanitize"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$jobs"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Sanitize >/dev/null
cmake --build build-asan -j "$jobs" --target unit_tests  # e2e runs on the Release build

section "unit tests (Release)"
run_ctest build unit
section "unit tests (ASan+UBSan)"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
run_ctest build-asan unit

if [ -f test/fuzz/run.sh ]; then
  section "fuzz (${FUZZ_SECONDS:-30}s per target)"
  cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
    -DASOP_FUZZ=ON -DBUILD_TESTING=ON >/dev/null
  cmake --build build-fuzz -j "$jobs" --target fuzz
  if bash test/fuzz/run.sh "${FUZZ_SECONDS:-30}" build-fuzz; then
    passed=$(( passed + 1 ))
  else
    echo "fuzz: a target found a failure"; failed=$(( failed + 1 ))
  fi
fi

if [ "${E2E:-1}" != 0 ]; then
  section "control plane"
  cp_dir=$(mktemp -d /tmp/asop-controlplane.XXXXXX)
  trap 'bash test/controlplane/down.sh "$cp_dir" --purge' EXIT
  bash test/controlplane/up.sh "$cp_dir"
  bash test/bench/build.sh  # the benchmark's Go peer, so the bench smoke test does not build it
  export KUBECONFIG=$cp_dir/kubeconfig ASOP_CONTROLPLANE_DIR=$cp_dir
  section "e2e tests"
  run_ctest build e2e 1
fi

section "summary"
echo "run-all: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
