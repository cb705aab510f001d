# Shared helpers for the shell e2e tests. Each test runs against $KUBECONFIG (set by run-all.sh).
set -euo pipefail
: "${KUBECONFIG:?KUBECONFIG must point at a running control plane (test/controlplane/up.sh)}"

fail() { echo "FAIL: $*" >&2; exit 1; }

# eventually SECONDS CMD...: retries CMD until it succeeds; fails the test at the deadline.
eventually() {
  local deadline=$(( $(date +%s) + $1 )); shift
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || fail "condition not met in time: $*"
    sleep 0.5
  done
}

# new_namespace PREFIX: creates a namespace, sets $ns to it (removed when the test exits) and waits
# for its default service account, without which Pods are refused. Not for $(...): the exit trap
# would fire in the subshell.
new_namespace() {
  ns=$1-$RANDOM$RANDOM
  kubectl create namespace "$ns" >/dev/null
  trap 'kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true' EXIT
  eventually 60 kubectl get serviceaccount default -n "$ns"
}
