#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The container image run the way docs/deploy.md tells users to: `docker run --network host` with a
# mounted kubeconfig reconciles the sample; --help works; the root filesystem is read-only; a
# kubeconfig with a relative certificate path or an exec plugin missing from the image fails at
# once with one clear line; `docker stop` (SIGTERM to PID 1) exits 0 within the grace period.
# Skipped (exit 77) without a Docker engine, unless REQUIRE_DOCKER=1. Uses the image that
# docker_image_test.sh builds (ASOP_IMAGE, default appservice-operator:dev).
# ctest: may-skip
# ctest: requires docker_image
source "$(dirname "$0")/lib/common.sh"
cd "${ASOP_SOURCE_DIR:?}"
require_docker
image=${ASOP_IMAGE:-appservice-operator:dev}
docker image inspect "$image" >/dev/null || fail "$image is not in the Docker engine (docker_image_test.sh builds it)"
step() { echo "--- $*"; }

# Every container is named $prefix-*, so the trap finds them all, also those named in a subshell.
prefix=asop-e2e-docker-$$
later=()  # failures that do not stop the rest of the test; reported at the end
work=$(mktemp -d /tmp/asop-docker-e2e.XXXXXX)
cleanup() {
  local c
  for c in $(docker ps -aq --filter "name=^$prefix-"); do docker rm -f "$c" >/dev/null 2>&1 || true; done
  kubectl delete namespace "${ns:-none}" --wait=false >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
# run_once NAME ARGS...: runs the image to completion (at most 60 s) with a name the trap removes;
# prints its output (stdout and stderr) and returns its exit code.
run_once() {
  local name=$prefix-$1; shift
  docker run -d --name "$name" --network host --read-only "$@" >/dev/null
  local rc
  rc=$(timeout 60 docker wait "$name") || fail "$name still running after 60 s"
  docker logs "$name" 2>&1
  docker rm -f "$name" >/dev/null
  return "$rc"
}

# The container runs as UID 65532, which cannot read a 0600 kubeconfig owned by someone else: give
# it a readable copy inside a private directory (a bind-mounted file ignores the host folder's mode).
install -m 0644 "$KUBECONFIG" "$work/kubeconfig"
server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
ca_data=$(kubectl config view --minify --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')

step "an unreadable kubeconfig: one clear line, non-zero exit"
install -m 0600 "$KUBECONFIG" "$work/private"
rc=0; out=$(run_once private -v "$work/private:/kubeconfig:ro" "$image" --kubeconfig /kubeconfig \
  --metrics-bind-address 0 --health-probe-bind-address 0) || rc=$?
echo "$out"
[ "$rc" != 0 ] || fail "unreadable kubeconfig: exit 0"
grep -q '/kubeconfig' <<<"$out" && grep -qi 'permission denied' <<<"$out" || fail "unreadable kubeconfig: unclear error"

step "a relative certificate path: one clear line, non-zero exit"
cat >"$work/relative" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: "$server", certificate-authority: pki/ca.crt}
users:
- name: someone
  user: {token: not-a-real-token}
contexts:
- name: local
  context: {cluster: local, user: someone}
current-context: local
YAML
chmod 0644 "$work/relative"
rc=0; out=$(run_once relative -v "$work/relative:/kubeconfig:ro" "$image" --kubeconfig /kubeconfig \
  --metrics-bind-address 0 --health-probe-bind-address 0) || rc=$?
echo "$out"
[ "$rc" != 0 ] || fail "relative certificate path: exit 0"
[ "$(grep -c . <<<"$out")" = 1 ] || fail "relative certificate path: not one line"
grep -q '/pki/ca.crt' <<<"$out" || fail "relative certificate path: the error does not name /pki/ca.crt"
grep -q 'not-a-real-token' <<<"$out" && fail "the token leaked into the output"

step "an exec plugin absent from the image: one clear line, non-zero exit"
cat >"$work/exec" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: "$server", certificate-authority-data: $ca_data}
users:
- name: someone
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: kubelogin
      args: [get-token]
      interactiveMode: Never
contexts:
- name: local
  context: {cluster: local, user: someone}
current-context: local
YAML
chmod 0644 "$work/exec"
# controller-runtime fails at start-up here (its first discovery request runs the plugin); the
# operator must exit too rather than retry a plugin that cannot appear in a running container.
name=$prefix-exec
docker run -d --name "$name" --network host --read-only -v "$work/exec:/kubeconfig:ro" "$image" \
  --kubeconfig /kubeconfig --metrics-bind-address 0 --health-probe-bind-address 0 >/dev/null
if rc=$(timeout 30 docker wait "$name"); then
  out=$(docker logs "$name" 2>&1)
  echo "$out"
  [ "$rc" != 0 ] || fail "missing exec plugin: exit 0"
  [ "$(grep -c . <<<"$out")" = 1 ] || fail "missing exec plugin: not one line"
else
  out=$(docker logs "$name" 2>&1)
  head -n 3 <<<"$out"
  later+=("missing exec plugin: still running after 30 s, retrying a plugin the image cannot have ($(grep -c . <<<"$out") log lines)")
fi
grep -q 'exec plugin "kubelogin".*not found' <<<"$out" || fail "missing exec plugin: the error does not name kubelogin"
docker rm -f "$name" >/dev/null

step "docker run with the kubeconfig reconciles the sample"
kubectl apply -f crds/ >/dev/null
wait_established appservices.app.example.com
ns=docker-$RANDOM$RANDOM
kubectl create namespace "$ns" >/dev/null
metrics=$(free_port); health=$(free_port "$metrics")
op=$prefix-operator
# --namespace: other e2e tests run at the same time on this control plane, each with its own operator.
docker run -d --name "$op" --network host --read-only -v "$work/kubeconfig:/kubeconfig:ro" "$image" \
  --kubeconfig /kubeconfig --namespace "$ns" --metrics-bind-address "127.0.0.1:$metrics" \
  --health-probe-bind-address "127.0.0.1:$health" >/dev/null
eventually 60 curl -fsS "127.0.0.1:$health/readyz"
sample_app | kubectl -n "$ns" apply -f - >/dev/null
cond() { kubectl -n "$ns" get appservice nginx-app -o jsonpath='{.status.conditions[?(@.type=="Available")].status}'; }
eventually 90 value_is True cond
uid=$(kubectl -n "$ns" get appservice nginx-app -o jsonpath='{.metadata.uid}')
for child in deployment/nginx-app service/nginx-app; do
  [ "$(kubectl -n "$ns" get "$child" -o jsonpath='{.metadata.ownerReferences[0].uid}')" = "$uid" ] ||
    fail "$child is not owned by the AppService"
done
kubectl -n "$ns" get appservices
has_metric "$metrics" '^controller_runtime_reconcile_total' || fail "no metrics"
[ "$(docker inspect -f '{{.HostConfig.ReadonlyRootfs}}' "$op")" = true ] || fail "root filesystem not read-only"

step "docker stop: SIGTERM to PID 1, exit 0 within the grace period"
start=$(date +%s)
docker stop -t 20 "$op" >/dev/null
took=$(( $(date +%s) - start ))
code=$(docker inspect -f '{{.State.ExitCode}}' "$op")
docker logs --tail 3 "$op" 2>&1
# Exit code 0 is the proof that SIGTERM was handled: past the 20 s grace period Docker kills with
# SIGKILL, exit code 137. How long the stop took is a figure (the docker CLI's own time included).
[ "$code" = 0 ] || fail "exit code $code after docker stop (took ${took}s): SIGTERM was not handled within the grace period"
echo "stopped in ${took}s with exit code 0"
if [ ${#later[@]} -gt 0 ]; then
  printf 'FAIL: %s\n' "${later[@]}" >&2
  exit 1
fi
echo "PASS: docker_run"
