#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs each libFuzzer target for a bounded time from its committed seeds.
#   test/fuzz/run.sh SECONDS BUILD_DIR [TARGET...]
# BUILD_DIR was configured with -DCMAKE_CXX_COMPILER=clang++ -DASOP_FUZZ=ON. New corpus entries go
# to BUILD_DIR/fuzz/corpus/<target> (seeds in the source tree stay as committed); findings go to
# BUILD_DIR/fuzz/artifacts/<target>/. Exits non-zero if any target finds a crash, leak or timeout.
set -u
if [[ $# -lt 2 ]]; then
  echo "usage: $0 SECONDS BUILD_DIR [TARGET...]" >&2
  exit 2
fi
seconds=$1
build_dir=$(cd "$2" && pwd) || exit 2
shift 2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=(watch_decoder_fuzz api_error_fuzz http_framing_fuzz)

# fuzz_one TARGET: runs one target; its summary and any failure go to BUILD_DIR/fuzz/TARGET.out.
fuzz_one() {
  local target=$1 exe corpus artifacts args dict log rc
  exe=$build_dir/test/fuzz/$target
  corpus=$build_dir/fuzz/corpus/$target
  artifacts=$build_dir/fuzz/artifacts/$target
  mkdir -p "$corpus" "$artifacts"
  args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$artifacts/")
  dict=$(find "$here" -name "$target.dict" -print -quit)
  [[ -n $dict ]] && args+=(-dict="$dict")
  log=$build_dir/fuzz/$target.log
  {
    echo "== $target: ${seconds}s, log $log"
    # The first directory receives new inputs; the seeds are only read.
    "$exe" "${args[@]}" "$corpus" "$here/seeds/$target" >"$log" 2>&1
    rc=$?
    grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' "$log"
    if [[ $rc -ne 0 ]]; then
      echo "== $target FAILED (exit $rc); tail of $log:"
      tail -n 40 "$log"
      ls "$artifacts"
    fi
    echo "$rc" >"$build_dir/fuzz/$target.rc"
  } >"$build_dir/fuzz/$target.out" 2>&1
}

for target in "${targets[@]}"; do
  if [[ ! -x $build_dir/test/fuzz/$target ]]; then
    echo "run.sh: $build_dir/test/fuzz/$target not built (cmake --build $build_dir --target fuzz)" >&2
    exit 2
  fi
done
mkdir -p "$build_dir/fuzz"
# One target per core at a time: each still gets a whole core for its SECONDS, so the same work is
# done as one after the other, in less wall time.
jobs=${FUZZ_JOBS:-$(nproc)}
for target in "${targets[@]}"; do
  rm -f "$build_dir/fuzz/$target.rc"
  while [[ $(jobs -rp | wc -l) -ge $jobs ]]; do wait -n; done
  fuzz_one "$target" &
done
wait
status=0
for target in "${targets[@]}"; do
  cat "$build_dir/fuzz/$target.out"
  [[ $(cat "$build_dir/fuzz/$target.rc" 2>/dev/null) == 0 ]] || status=1
done
exit $status
