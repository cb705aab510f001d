# SPDX-License-Identifier: Apache-2.0
# Files the tests take from Go modules, through the Go module proxy and cached in the Go module
# cache like the control plane's sources: the Prometheus Operator's and cert-manager's CRDs
# (monitoring_crds_test.sh applies them, admin_linters_test.sh validates against them) and the
# Kubernetes OpenAPI spec of the pinned control plane.
PROMETHEUS_OPERATOR_VERSION=v0.89.0
CERT_MANAGER_VERSION=v1.19.1
export PATH=$PATH:/usr/local/go/bin

# go_module_dir MODULE@VERSION: its source folder in the Go module cache (downloaded once).
go_module_dir() {
  local dir
  command -v go >/dev/null || { echo "Go is not installed (test/deps.sh installs it)" >&2; return 1; }
  dir=$(cd / && GOFLAGS=-mod=mod go mod download -json "$1" | jq -r '.Dir // empty')
  [ -n "$dir" ] && [ -d "$dir" ] || { echo "go mod download $1 gave no folder" >&2; return 1; }
  echo "$dir"
}
# prometheus_operator_crds: the folder of the Prometheus Operator's CRD files.
prometheus_operator_crds() {
  local dir
  dir=$(go_module_dir "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION") &&
    echo "$dir/example/prometheus-operator-crd"
}
# cert_manager_crds: the folder of cert-manager's CRD files.
cert_manager_crds() {
  local dir
  dir=$(go_module_dir "github.com/cert-manager/cert-manager@$CERT_MANAGER_VERSION") && echo "$dir/deploy/crds"
}
# kubernetes_swagger: api/openapi-spec/swagger.json of the k8s.io/kubernetes module the control
# plane pins (test/controlplane/modules/kubernetes-vMINOR, the newest minor unless K8S_MINOR says).
kubernetes_swagger() {
  local here dir
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../controlplane" && pwd)
  (source "$here/versions.sh" &&
    dir=$(cd "$here/modules/$KUBERNETES_MODULE" && GOFLAGS=-mod=readonly go mod download -json k8s.io/kubernetes |
      jq -r '.Dir // empty') &&
    [ -f "$dir/api/openapi-spec/swagger.json" ] && echo "$dir/api/openapi-spec/swagger.json") ||
    { echo "no api/openapi-spec/swagger.json in the pinned k8s.io/kubernetes module" >&2; return 1; }
}
