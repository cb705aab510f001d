#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
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
# kubeconfig NAME SERVER CLUSTER-LINES USER-LINES: one context "c" with a token user.
kubeconfig() {
  printf 'apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n  cluster:\n    server: %s\n%busers:\n- name: u\n  user:\n    token: t\n%bcontexts:\n- name: c\n  context: {cluster: k, user: u}\n' \
    "$2" "$3" "$4" > "$tmp/$1"
}
# A scoped IPv6 tls-server-name cannot be verified; it must not turn host verification off.
kubeconfig scoped-sni https://127.0.0.1:1 "    tls-server-name: fe80::1%eth0\n" ""
kubeconfig unknown-user-field https://127.0.0.1:1 "" "    act-as: root\n"
kubeconfig unknown-cluster-field https://127.0.0.1:1 "    tls-min-version: \"1.3\"\n" ""
kubeconfig socks-proxy https://127.0.0.1:1 "    proxy-url: socks5://127.0.0.1:1080\n" ""
kubeconfig https-proxy https://127.0.0.1:1 "    proxy-url: https://127.0.0.1:3128\n" ""
kubeconfig remote https://api.invalid:6443 "" ""
# An exec plugin that is not installed: the start-up run fails, and only that one line is printed.
printf 'apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters: [{name: k, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: asop-no-such-plugin, interactiveMode: Never}}}]\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n' > "$tmp/missing-plugin"

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
usage_error --kubeconfig "$tmp/absent" --reconcile-timeout=soon
usage_error --kubeconfig "$tmp/absent" --watch-list=maybe
usage_error --kubeconfig "$tmp/absent" --no-such-flag
usage_error --kubeconfig "$tmp/absent" stray-argument
usage_error --kubeconfig
# Unusable kubeconfigs: missing, malformed YAML, a context that does not exist.
usage_error --kubeconfig "$tmp/absent"
usage_error --kubeconfig "$tmp/malformed"
usage_error --kubeconfig "$tmp/no-context"
usage_error --kubeconfig "$tmp"
# Names that become URL path segments and would address another path (issue 12 item 7), with a
# kubeconfig that is otherwise fine: refused before any request.
path_error() { usage_error "$@"; grep -q 'may not' "$tmp/err" || fail "$*: $(cat "$tmp/err")"; }
for bad in .. a/b a%2Fb; do
  path_error --kubeconfig "$tmp/remote" --namespace "$bad"
  path_error --kubeconfig "$tmp/remote" --leader-elect --leader-election-namespace "$bad"
  path_error --kubeconfig "$tmp/remote" --leader-elect --leader-election-id "$bad"
done
path_error --kubeconfig "$tmp/remote" --leader-elect --leader-election-id ""
kubeconfig bad-namespace https://127.0.0.1:1 "" ""
sed -i 's/context: {cluster: k, user: u}/context: {cluster: k, user: u, namespace: ..}/' "$tmp/bad-namespace"
path_error --kubeconfig "$tmp/bad-namespace" --leader-elect
# Kubeconfigs that ask for something the client does not do (issue 12): refused, never ignored.
usage_error --kubeconfig "$tmp/scoped-sni"
grep -q 'tls-server-name "fe80::1%eth0" cannot be verified' "$tmp/err" || fail "scoped-sni: $(cat "$tmp/err")"
usage_error --kubeconfig "$tmp/unknown-user-field"
grep -q 'field "act-as" (line 12) is not supported' "$tmp/err" || fail "act-as: $(cat "$tmp/err")"
usage_error --kubeconfig "$tmp/unknown-cluster-field"
grep -q 'field "tls-min-version"' "$tmp/err" || fail "tls-min-version: $(cat "$tmp/err")"
usage_error --kubeconfig "$tmp/socks-proxy"
grep -q 'scheme socks5 is not supported' "$tmp/err" || fail "socks5: $(cat "$tmp/err")"
usage_error --kubeconfig "$tmp/https-proxy"
grep -q 'proxy-url names an https proxy: scheme https is not supported' "$tmp/err" ||
  fail "proxy-url: $(cat "$tmp/err")"
HTTPS_PROXY=socks5://proxy.invalid:1080 usage_error --kubeconfig "$tmp/remote"
grep -q 'HTTPS_PROXY names a socks5 proxy' "$tmp/err" || fail "HTTPS_PROXY: $(cat "$tmp/err")"
usage_error --kubeconfig "$tmp/missing-plugin"
grep -q 'exec plugin "asop-no-such-plugin" .* not found in PATH' "$tmp/err" || fail "plugin: $(cat "$tmp/err")"
echo "PASS: operator_flags"
