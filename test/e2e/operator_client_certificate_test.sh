#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Client certificates that change after start-up are used: (1) an exec plugin that returns
# clientCertificateData/clientKeyData (mutual-TLS plugins) authenticates with that certificate;
# (2) client-certificate/client-key files in the kubeconfig are re-read when they are rotated on
# disk: the operator starts with a certificate the API server rejects (401) and works once the
# files hold the admin certificate, without a restart.
source "$(dirname "$0")/lib/common.sh"
cd "${ASOP_SOURCE_DIR:?}"
work=$(mktemp -d /tmp/asop-e2e-cert.XXXXXX)
trap 'stop_all_operators; rm -rf "$work"; kubectl delete namespace "${ns:-none}" --wait=false >/dev/null 2>&1 || true' EXIT
kubectl apply -f crds/ >/dev/null
wait_established appservices.app.example.com
ns=cert-$RANDOM$RANDOM
kubectl create namespace "$ns" >/dev/null
eventually 60 kubectl get serviceaccount default -n "$ns"
pki=${ASOP_CONTROLPLANE_DIR:-$(dirname "$KUBECONFIG")}/pki
converges() { # NAME: an AppService NAME gets its Deployment, and is deleted
  kubectl apply -n "$ns" -f - >/dev/null <<YAML
apiVersion: app.example.com/v1
kind: AppService
metadata: {name: $1}
spec: {size: 1, image: nginx:1.27}
YAML
  eventually 60 kubectl get deployment "$1" -n "$ns"
  # Deleted while this operator runs: it removes the finalizer.
  kubectl delete appservice "$1" -n "$ns" --wait=true --timeout=60s >/dev/null
}

# (1) The plugin returns the admin client certificate and no token.
mkdir "$work/exec"
exec_kubeconfig "$work/exec" --exec-env="ASOP_E2E_EXEC_CERT=$pki/admin.crt" \
  --exec-env="ASOP_E2E_EXEC_KEY=$pki/admin.key"
OP_KUBECONFIG=$work/exec/kubeconfig start_operator plugin --namespace "$ns"
converges from-plugin
has_metric "$OP_METRICS_plugin" '^rest_client_requests_total{code="401"' &&
  fail "the operator got 401s with the plugin's client certificate"
stop_operator "$OP_PID_plugin" TERM || fail "the operator did not exit 0 on SIGTERM"
echo "exec plugin client certificate: used"

# (2) Files, rotated on disk. A certificate from another CA is refused by the API server.
mkdir "$work/files"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=stranger \
  -addext extendedKeyUsage=clientAuth -keyout "$work/files/client.key" -out "$work/files/client.crt" 2>/dev/null
server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
kubectl --kubeconfig "$work/files/kubeconfig" config set-cluster c --server "$server" \
  --certificate-authority "$pki/ca.crt" --embed-certs >/dev/null
kubectl --kubeconfig "$work/files/kubeconfig" config set-credentials u \
  --client-certificate "$work/files/client.crt" --client-key "$work/files/client.key" >/dev/null
kubectl --kubeconfig "$work/files/kubeconfig" config set-context c --cluster c --user u >/dev/null
kubectl --kubeconfig "$work/files/kubeconfig" config use-context c >/dev/null
metrics=$(free_port); health=$(free_port "$metrics")
"${ASOP_BINARY:?}" --kubeconfig "$work/files/kubeconfig" --namespace "$ns" \
  --metrics-bind-address "127.0.0.1:$metrics" --health-probe-bind-address "127.0.0.1:$health" \
  >>"$OP_LOG_DIR/files.log" 2>&1 &
OPERATOR_PIDS+=("$!")
files_pid=$!
eventually 60 has_metric "$metrics" '^rest_client_requests_total{code="401"'
curl -fsS "127.0.0.1:$health/readyz" >/dev/null 2>&1 && fail "ready while the API server refuses the certificate"
# Rotate as cert-manager or a kubelet would: new files moved into place.
cp "$pki/admin.crt" "$work/files/client.crt.new"
cp "$pki/admin.key" "$work/files/client.key.new"
mv "$work/files/client.key.new" "$work/files/client.key"
mv "$work/files/client.crt.new" "$work/files/client.crt"
eventually 60 curl -fsS "127.0.0.1:$health/readyz"
converges from-files
grep -q 'client certificate for .* changed (kubeconfig files)' "$OP_LOG_DIR/files.log" ||
  fail "no log line for the rotated certificate"
stop_operator "$files_pid" TERM || fail "the operator did not exit 0 on SIGTERM"
echo "rotated client certificate files: picked up without a restart"
echo "PASS: operator_client_certificate"
