#!/usr/bin/env bash
# Every bad flag (or unusable kubeconfig) is a usage error: exit 2 and exactly one line on stderr,
# never an abort with a stack trace. Needs no control plane: the binary must refuse before it
# connects anywhere.
set -euo pipefail
bin=${ASOP_BINARY:?ASOP_BINARY must name the operator binary}
tmp=$(mktemp -d /tmp/asop-flags.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

printf 'apiVersion: v1\nkind: Config\nclusters: [\n' > "$tmp/malformed"
printf 'apiVersion: v1\nkind: Config\ncurrent-context: nowhere\n' > "$tmp/no-context"

# usage_error ARGS...: the binary exits 2 with one stderr line and no trace.
usage_error() {
  local rc=0
  timeout 20 "$bin" "$@" > "$tmp/out" 2> "$tmp/err" < /dev/null || rc=$?
  [ "$rc" = 2 ] || fail "$* exited $rc, want 2; stderr: $(head -c 2000 "$tmp/err")"
  [ "$(wc -l < "$tmp/err")" = 1 ] ||
    fail "$*: want exactly one stderr line, got: $(head -c 2000 "$tmp/err")"
  ! grep -qiE 'check failed|stack|abort|terminate called' "$tmp/err" || fail "$*: $(cat "$tmp/err")"
  echo "ok: $* -> $(cat "$tmp/err")"
}

le=(--kubeconfig "$tmp/absent" --leader-elect)
# The issue's abort: a sub-second lease part the Lease cannot hold.
usage_error "${le[@]}" --leader-elect-lease-duration=1500ms --leader-elect-renew-deadline=1200ms
usage_error "${le[@]}" --leader-elect-lease-duration=15.5s
# Renew deadline not shorter than the lease.
usage_error "${le[@]}" --leader-elect-lease-duration=10s --leader-elect-renew-deadline=10s
usage_error "${le[@]}" --leader-elect-lease-duration=10s --leader-elect-renew-deadline=12s
# Retry period too long for the renew deadline (client-go: renewDeadline > 1.2 * retryPeriod).
usage_error "${le[@]}" --leader-elect-renew-deadline=10s --leader-elect-retry-period=9s
usage_error "${le[@]}" --leader-elect-renew-deadline=2400ms --leader-elect-retry-period=2s
# Zero, negative, malformed, absurd durations.
for flag in --leader-elect-lease-duration --leader-elect-renew-deadline --leader-elect-retry-period; do
  for value in 0s 0 -1s -5m "" .s 1.2.3s 10x 1e300h; do usage_error "${le[@]}" "$flag=$value"; done
done
# Verbosity, other numbers, unknown flags.
for v in abc -1 1.5 ""; do usage_error --kubeconfig "$tmp/absent" -v "$v"; done
usage_error --kubeconfig "$tmp/absent" --max-concurrent-reconciles=0
usage_error --kubeconfig "$tmp/absent" --list-page-size=-3
usage_error --kubeconfig "$tmp/absent" --no-such-flag
usage_error --kubeconfig "$tmp/absent" stray-argument
usage_error --kubeconfig
# Unusable kubeconfigs: missing, malformed YAML, a context that does not exist.
usage_error --kubeconfig "$tmp/absent"
usage_error --kubeconfig "$tmp/malformed"
usage_error --kubeconfig "$tmp/no-context"
usage_error --kubeconfig "$tmp"
echo "PASS: operator_flags"
