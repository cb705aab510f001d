#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The long churn soak: 1,000 AppServices created, updated and deleted in 10 waves (CI runs 200 in
# 3: test/e2e/faults/churn_soak_test.sh). Uses build/appservice-operator (or $ASOP_BINARY) and the
# control plane of $KUBECONFIG; without KUBECONFIG it starts one of its own and removes it after.
# SOAK_OBJECTS and SOAK_WAVES change the size.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
export PATH=$PATH:/usr/local/go/bin
export ASOP_BINARY=${ASOP_BINARY:-$root/build/appservice-operator} ASOP_SOURCE_DIR=$root
export SOAK_OBJECTS=${SOAK_OBJECTS:-1000} SOAK_WAVES=${SOAK_WAVES:-10}
[ -x "$ASOP_BINARY" ] || { echo "soak: no operator binary at $ASOP_BINARY (build it first)" >&2; exit 2; }
if [ -z "${KUBECONFIG:-}" ]; then
  cp_dir=$(mktemp -d /tmp/asop-soak-cp.XXXXXX)
  trap 'bash test/controlplane/down.sh "$cp_dir" --purge' EXIT
  bash test/controlplane/up.sh "$cp_dir"
  export KUBECONFIG=$cp_dir/kubeconfig
fi
bash test/e2e/faults/churn_soak_test.sh
