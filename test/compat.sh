#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test/compat.sh [MINOR...]: runs the operator's e2e tests against each supported Kubernetes minor
# (default: every one in test/controlplane/versions.sh, newest first), each on a control plane of
# its own pinned versions (built from the Go module proxy once, then cached like the default one)
# and with the kubectl built at that version. Not part of test/run-all.sh, which runs everything
# on the newest minor; this is how the older ones in README.md's support table are proven.
#
# Left out here, since they do not depend on the server's version: the ASan twins (e2e.asan.*),
# the Docker image tests (and incluster_rbac_test, which runs the image docker_image_test builds),
# helm, Prometheus and the benchmark smoke test.
#
# Ends with one line per minor (minor, patch, result, date, seconds) and
# "compat: N passed, N failed"; writes the same rows to build/compat.tsv; exits non-zero when a
# minor fails.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
export PATH=$PATH:/usr/local/go/bin
source test/controlplane/versions.sh
source test/lib/suite.sh
source test/lib/crd.sh
minors=("$@")
[ ${#minors[@]} -gt 0 ] || read -r -a minors <<<"$K8S_MINORS"
for m in "${minors[@]}"; do
  case " $K8S_MINORS " in
    *" $m "*) ;;
    *) echo "compat.sh: $m is not a supported minor (one of: $K8S_MINORS)" >&2; exit 2 ;;
  esac
done
exclude='^e2e\.(asan\.|docker_|incluster_rbac_test|helm_chart_test|prometheus_test|monitoring_crds_test|bench_smoke_test)'
jobs=${E2E_JOBS:-$(( 4 * $(nproc) ))}

bash test/deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)"

cp_dir=""
cleanup() { [ -z "$cp_dir" ] || bash test/controlplane/down.sh "$cp_dir" --purge || true; }
trap cleanup EXIT
rows=()
base_path=$PATH
for m in "${minors[@]}"; do
  start=$(date +%s)
  export K8S_MINOR=$m
  source test/controlplane/versions.sh
  echo "=== Kubernetes $KUBERNETES_VERSION ($(date +%T))"
  before=$failed
  bin=$(bash test/controlplane/build.sh)
  PATH=$bin/client:$base_path
  cp_dir=$(mktemp -d "/tmp/asop-compat-$m.XXXXXX")
  if bash test/controlplane/up.sh "$cp_dir"; then
    export KUBECONFIG=$cp_dir/kubeconfig ASOP_CONTROLPLANE_DIR=$cp_dir
    server=$(kubectl version -o json | jq -r .serverVersion.gitVersion)
    client=$(kubectl version --client -o json | jq -r .clientVersion.gitVersion)
    if [ "$server" != "$KUBERNETES_VERSION" ] || [ "$client" != "$KUBERNETES_VERSION" ]; then
      suite_fail "$m: server $server, kubectl $client, want $KUBERNETES_VERSION for both"
    fi
    kubectl apply -f crds/ >/dev/null
    wait_established appservices.app.example.com
    expected=$(ctest --test-dir build -N -L e2e -E "$exclude" | sed -n 's/^Total Tests: //p')
    report=$(mktemp /tmp/asop-compat-junit.XXXXXX)
    rc=0
    ctest --test-dir build -L e2e -E "$exclude" --output-on-failure -j "$jobs" --timeout 1500 \
      --output-junit "$report" || rc=$?
    count_junit "$report" "$expected" "$rc" "e2e on $KUBERNETES_VERSION"
    rm -f "$report"
  else
    suite_fail "$m: test/controlplane/up.sh failed"
  fi
  bash test/controlplane/down.sh "$cp_dir" --purge || true
  cp_dir=""
  result=passed
  [ "$failed" -eq "$before" ] || result=failed
  rows+=("$m	$KUBERNETES_VERSION	$result	$(date -u +%F)	$(( $(date +%s) - start ))")
done

echo
echo "=== compat (minor, patch, result, date, seconds)"
mkdir -p build
printf '%s\n' "${rows[@]}" | tee build/compat.tsv
[ ${#failures[@]} -eq 0 ] || printf '  %s\n' "${failures[@]}"
echo "compat: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
