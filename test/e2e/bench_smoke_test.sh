#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Smoke run of the side-by-side benchmarks (test/bench/run.sh, then the restart scenario of
# test/bench/restart.sh): 20 AppServices, one round, both operators, on a control plane of its own
# (it measures, so it must not share the API server with other tests). Proves the harnesses work;
# the figures are not judged here (docs/benchmarks.md).
source "$(dirname "$0")/faults/lib.sh"
export PATH=$PATH:/usr/local/go/bin
command -v go >/dev/null || { echo "SKIP: Go is not installed, the peer operator cannot be built"; exit 77; }

bash test/bench/build.sh >/dev/null # before the control plane, so a slow first build costs it nothing
own_controlplane
out=$(mktemp -d /tmp/asop-bench-smoke.XXXXXX)
trap 'cleanup; rm -rf "$out"' EXIT
start=$(date +%s)
bash test/bench/run.sh --kubeconfig "$KUBECONFIG" --counts 20 --sizes 0,1 --rounds 1 \
  --rest 10 --quiet 5 --settle-max 120 --timeout 180 --out "$out" --restart --restart-idle 5 ||
  fail "run.sh failed"
echo "bench smoke: $(( $(date +%s) - start ))s"

# One result line per operator and size, each with every figure.
for op in ours peer; do
  for size in 0 1; do
    line=$(grep "^op=$op n=20 size=$size " "$out/results.txt") || fail "no result for $op size $size"
    for key in ready_s converge_s cpu_converge_s rss_peak_mib rss_settled_mib writes_per_app \
      writes_rest_per_min delete_s req_GET; do
      [[ " $line " =~ \ $key=[0-9.]+\  ]] || fail "$op size $size: $key missing in: $line"
    done
  done
done
# The table: both columns and the ratio filled for every measured figure.
table=$out/table.md
for size in 0 1; do
  grep -q "^N = 20, size $size (medians of 1 rounds ours, 1 peer)" "$table" || fail "no table for size $size"
done
for figure in "start to ready (s)" "first create to all Available (s)" "peak RSS (MiB)" \
  "settled RSS (MiB)" "CPU to converge, from start (s)" "writes per AppService, create to settled" \
  "delete all (s)"; do
  rows=$(grep -cE "^\| $(sed 's/[()]/\\&/g' <<<"$figure") \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \|$" "$table" || true)
  [ "$rows" = 2 ] || fail "table row \"$figure\" lacks a figure or ratio:
$(cat "$table")"
done
cat "$table"

# The restart scenario (run.sh --restart): with the bulk change and without.
for op in ours peer; do
  line=$(grep "^op=$op n=20 " "$out/restart/restart.txt") || fail "no restart result for $op"
  for key in ready_s edit_s bulk_s rss_mib fresh_rss_mib restart_vs_fresh writes_per_app cpu_s \
    idle_ready_s idle_rss_mib idle_cpu_s idle_writes; do
    [[ " $line " =~ \ $key=[0-9.]+\  ]] || fail "restart $op: $key missing in: $line"
  done
done
rows=$(grep -cE '^\| [^|]+ \| [0-9.]+ \| [0-9.]+ \| ([0-9.]+|-) \|$' "$out/restart/restart.md" || true)
[ "$rows" = 12 ] || fail "the restart table lacks figures:
$(cat "$out/restart/restart.md")"
cat "$out/restart/restart.md"
echo "PASS: bench_smoke"
