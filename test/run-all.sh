#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole test suite, from a fresh Debian 12 machine (as root): installs what is missing, checks
# formatting, builds the Release, Sanitize (ASan+UBSan) and fuzz builds, runs the unit tests in
# both, runs the fuzz targets for a bounded time, brings up a local control plane, runs the e2e
# tests in parallel, and tears everything down. Ends with "run-all: N passed, N failed, N skipped"
# and a timing table; exits non-zero on any failure, and leaves no process behind.
#
# Every ctest run is counted from its JUnit report and checked against the number of tests it
# should have run: a crashed or killed ctest, a missing report or a test with no result is a
# failure. Only tests that may legitimately not run here (exit 77, declared per test) are skips.
#
# Environment: FUZZ_SECONDS (default 30 per target); E2E=0 skips the control plane and e2e tests;
# E2E_JOBS (default 4 per core) e2e tests at once; REQUIRE_DOCKER=1 (set by .ci/run) makes a missing or
# broken Docker engine a failure instead of a skip.
#
# Each run writes its section and test times to build/timings.tsv. `test/run-all.sh --list` prints
# them (or, before a first run, those of test/timings.tsv, the committed copy from which CMake
# gives each e2e test its COST, so ctest starts the longest first).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
if [ "${1:-}" = --list ]; then
  exec bash test/lib/list_timings.sh
fi
[ $# -eq 0 ] || { echo "usage: test/run-all.sh [--list]" >&2; exit 2; }
export PATH=$PATH:/usr/local/go/bin
jobs=$(nproc)
source test/lib/suite.sh
source test/lib/crd.sh
timings=()
TIMES_OUT=$(mktemp /tmp/asop-times.XXXXXX)
FAILURE_TAILS=$(mktemp /tmp/asop-failure-tails.XXXXXX)
run_start=$(date +%s)
section_name="" section_start=$run_start

end_section() {
  [ -n "$section_name" ] || return 0
  timings+=("$section_name|$(( $(date +%s) - section_start ))")
  section_name=""
}
section() {
  end_section
  section_name=$*
  section_start=$(date +%s)
  echo
  echo "=== $* ($(date +%T))"
}

summary() {
  end_section
  local total=$(( $(date +%s) - run_start )) t
  echo
  echo "=== timing"
  for t in "${timings[@]}"; do
    printf '%-44s %5ds  %2dm%02ds\n' "${t%|*}" "${t##*|}" $(( ${t##*|} / 60 )) $(( ${t##*|} % 60 ))
    printf 'section\t%s\t%s\n' "${t%|*}" "${t##*|}" >>"$TIMES_OUT"
  done
  printf '%-44s %5ds  %2dm%02ds\n' "total" "$total" $(( total / 60 )) $(( total % 60 ))
  printf 'section\ttotal\t%s\n' "$total" >>"$TIMES_OUT"
  if [ -d build ]; then
    { echo "# test/run-all.sh of $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u +%F), $(nproc) cores"
      cat "$TIMES_OUT"; } >build/timings.tsv
    echo "(each section's and test's time: build/timings.tsv; test/run-all.sh --list prints them)"
  fi
  if [ ${#failures[@]} -gt 0 ]; then
    echo
    echo "=== failures"
    printf '  %s\n' "${failures[@]}"
    if [ -s "$FAILURE_TAILS" ]; then
      echo
      echo "=== the failing tests' last lines (all of it: --output-on-failure, above)"
      cat "$FAILURE_TAILS"
    fi
  fi
  echo
  echo "=== summary ($(date +%T))"
  echo "run-all: $passed passed, $failed failed, $skipped skipped"
}

# abort WHAT: a step everything after it needs has failed; report and stop.
abort() {
  suite_fail "$*"
  summary
  exit 1
}

section "dependencies"
bash test/deps.sh || abort "dependencies: test/deps.sh failed"
# The control plane's (and the benchmark peer's) Go build is long and partly waits on the module proxy: start it now, in the
# background, and collect it before the e2e tests.
cp_build_log=$(mktemp /tmp/asop-cp-build.XXXXXX)
cp_build_pid=""
if [ "${E2E:-1}" != 0 ]; then
  # Its own process group (setsid), so cleanup can stop the go commands it started, too. The
  # benchmark's Go peer and helm (for the chart tests) are built with it, so no test builds them.
  setsid bash -c 'bash test/controlplane/build.sh && bash test/bench/build.sh && bash test/tools/build-helm.sh && bash test/tools/build-lint-tools.sh' >"$cp_build_log" 2>&1 &
  cp_build_pid=$!
fi
cleanup() {
  [ -z "$cp_build_pid" ] || kill -- "-$cp_build_pid" 2>/dev/null || true
  [ -z "${cp_dir:-}" ] || bash test/controlplane/down.sh "$cp_dir" --purge || true
  rm -f "$cp_build_log" "$TIMES_OUT" "$FAILURE_TAILS"
}
trap cleanup EXIT

section "format (clang-format)"
if format_check; then suite_pass; else suite_fail "format: clang-format check failed"; fi

# ccache (installed by deps.sh) makes a second run cheap, also from another clone: paths are
# hashed relative to the checkout, and the precompiled headers are trusted as ccache's manual
# says they must be for -include'd headers.
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=true CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
  export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
  ccache --zero-stats >/dev/null
fi
section "build Sanitize (ASan+UBSan)"
{ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Sanitize "${launcher[@]}" >/dev/null &&
  cmake --build build-asan -j "$jobs" --target unit_tests appservice-operator; } ||
  abort "build: the Sanitize build failed"
section "build Release"
# The Release objects also go to a ccache `file:` remote storage (also on a local hit: reshare),
# which test/docker/build-image.sh serves to the image's build stage: the Docker image test then
# links what this build compiled instead of compiling it all again beside the e2e tests.
release_env=()
if [ ${#launcher[@]} -gt 0 ]; then
  export ASOP_CCACHE_SHARE=${XDG_CACHE_HOME:-$HOME/.cache}/appservice-operator/ccache-share
  mkdir -p "$ASOP_CCACHE_SHARE"
  find "$ASOP_CCACHE_SHARE" -type f -mtime +14 -delete 2>/dev/null || true
  # ccache hashes LANG and LC_ALL/LC_CTYPE/LC_MESSAGES: one locale here and in the Dockerfile.
  release_env=(-u LC_ALL -u LC_CTYPE -u LC_MESSAGES LANG=C.UTF-8
    CCACHE_REMOTE_STORAGE="file:$ASOP_CCACHE_SHARE" CCACHE_RESHARE=true)
fi
{ cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" \
  -DASOP_ASAN_BINARY="$root/build-asan/appservice-operator" >/dev/null &&
  env "${release_env[@]}" cmake --build build -j "$jobs"; } || abort "build: the Release build failed"

section "unit tests (Release)"
run_ctest build unit "$jobs" "unit (Release)"
section "unit tests (ASan+UBSan)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_ctest build-asan unit "$jobs" "unit (ASan+UBSan)"

section "fuzz (${FUZZ_SECONDS:-30}s per target)"
if ! { cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
  -DASOP_FUZZ=ON -DBUILD_TESTING=ON "${launcher[@]}" >/dev/null &&
  cmake --build build-fuzz -j "$jobs" --target fuzz; }; then
  suite_fail "fuzz: the fuzz build failed"
elif bash test/fuzz/run.sh "${FUZZ_SECONDS:-30}" build-fuzz; then
  suite_pass
else
  suite_fail "fuzz: a target found a failure"
fi

if [ "${E2E:-1}" != 0 ]; then
  section "control plane (build collected, up)"
  if ! wait "$cp_build_pid"; then
    cat "$cp_build_log"
    cp_build_pid=""
    suite_fail "control plane: the Go build (controlplane/build.sh, bench/build.sh, tools/build-helm.sh, tools/build-lint-tools.sh) failed"
  else
    cp_build_pid=""
    cat "$cp_build_log"
    # Every test uses the kubectl built with the control plane, at the server's version.
    PATH=$(bash test/controlplane/build.sh)/client:$PATH
    export PATH
    cp_dir=$(mktemp -d /tmp/asop-controlplane.XXXXXX)
    bash test/controlplane/up.sh "$cp_dir" || abort "control plane: up.sh failed"
    export KUBECONFIG=$cp_dir/kubeconfig ASOP_CONTROLPLANE_DIR=$cp_dir
    # Installed once here: tests running in parallel then only re-apply it, never race to create it.
    kubectl apply -f crds/ >/dev/null
    wait_established appservices.app.example.com

    # The e2e tests mostly wait (for controllers, timeouts, backoffs): at 4 at once on 2 cores the
    # machine was 60% idle, at 8 it was busy and the section took half the time
    # (docs/build-time.md). A test with its own control plane takes 2 slots (ctest PROCESSORS).
    e2e_jobs=${E2E_JOBS:-$(( 4 * jobs ))}
    section "e2e tests ($e2e_jobs at once)"
    run_ctest build e2e "$e2e_jobs" "e2e"
  fi
fi
if [ ${#launcher[@]} -gt 0 ]; then
  echo; echo "=== ccache"; ccache --show-stats | grep -E 'Hits|Misses|Cache size' || true
fi

summary
[ "$failed" -eq 0 ]
