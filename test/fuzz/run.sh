#!/usr/bin/env bash
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

status=0
for target in "${targets[@]}"; do
  exe=$build_dir/test/fuzz/$target
  if [[ ! -x $exe ]]; then
    echo "run.sh: $exe not built (cmake --build $build_dir --target fuzz)" >&2
    exit 2
  fi
  corpus=$build_dir/fuzz/corpus/$target
  artifacts=$build_dir/fuzz/artifacts/$target
  mkdir -p "$corpus" "$artifacts"
  args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$artifacts/")
  dict=$(find "$here" -name "$target.dict" -print -quit)
  [[ -n $dict ]] && args+=(-dict="$dict")
  log=$build_dir/fuzz/$target.log
  echo "== $target: ${seconds}s, log $log"
  # The first directory receives new inputs; the seeds are only read.
  "$exe" "${args[@]}" "$corpus" "$here/seeds/$target" >"$log" 2>&1
  rc=$?
  grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' "$log"
  if [[ $rc -ne 0 ]]; then
    echo "== $target FAILED (exit $rc); tail of $log:" >&2
    tail -n 40 "$log" >&2
    ls "$artifacts" >&2
    status=1
  fi
done
exit $status
