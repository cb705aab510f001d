#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What a cluster admin's own tools say about our manifests, before installing them: kubeconform
# -strict and kube-score (test/tools/build-lint-tools.sh builds both from their Go modules) and
# `helm lint --strict`, over every rendering we ship: `kubectl kustomize` of deploy/,
# deploy/monitored, deploy/cert-managed and deploy/shards, dist/install.yaml, and `helm template`
# of the chart with the default values and with every switch on (and deploy/samples for
# kubeconform). kubeconform's schemas are made offline (test/tools/k8s-json-schemas.sh) from the
# pinned Kubernetes module's OpenAPI spec and from the CRDs: ours, the Prometheus Operator's and
# cert-manager's. Every kubeconform error fails; a kube-score finding fails unless
# test/e2e/fixtures/kube-score-accepted.tsv lists it with its reason, and a line there that
# nothing produces any more fails too. What the linters do not check, checked here on every
# rendering: each Deployment's topology spread counts its own Pods only (its selector), each
# PodDisruptionBudget lets unhealthy Pods be evicted, each object carries the name and version
# labels. Each check is shown to catch a planted fault. No control plane.
set -euo pipefail
cd "${ASOP_SOURCE_DIR:-$(dirname "$0")/../..}"
fail() { echo "FAIL: $*" >&2; exit 1; }
source test/lib/go_modules.sh
helm=$(bash test/tools/build-helm.sh) || fail "test/tools/build-helm.sh failed"
tools=$(bash test/tools/build-lint-tools.sh) || fail "test/tools/build-lint-tools.sh failed"
tmp=$(mktemp -d /tmp/asop-lint.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
version=$(sed -n 's/^project(appservice-operator VERSION \([0-9][0-9.]*\).*/\1/p' CMakeLists.txt)
accepted=test/e2e/fixtures/kube-score-accepted.tsv
echo "$("$tools/kubeconform" -v) kubeconform, $("$tools/kube-score" version), helm $("$helm" version --short)"

swagger=$(kubernetes_swagger) || fail "the Kubernetes OpenAPI spec"
po=$(prometheus_operator_crds) || fail "the Prometheus Operator's CRDs"
cm=$(cert_manager_crds) || fail "cert-manager's CRDs"
bash test/tools/k8s-json-schemas.sh "$tmp/schemas" "$swagger" crds/*.yaml "$po"/*.yaml "$cm"/*.yaml

# The renderings, one file each.
mkdir -p "$tmp/r"
for dir in deploy deploy/monitored deploy/cert-managed deploy/shards; do
  kubectl kustomize "$dir" >"$tmp/r/kustomize-${dir//\//-}.yaml"
done
cp dist/install.yaml "$tmp/r/dist-install.yaml"
switches=serviceMonitor.enabled=true,prometheusRule.enabled=true,dashboard.enabled=true,networkPolicy.enabled=true,certManager.enabled=true
"$helm" template appservice-operator charts/appservice-operator --namespace appservice-system >"$tmp/r/helm-default.yaml"
"$helm" template appservice-operator charts/appservice-operator --namespace appservice-system --set "$switches" \
  >"$tmp/r/helm-every-switch.yaml"
renderings=("$tmp"/r/*.yaml)

# kubeconform FILE...: strict validation against the generated schemas (a kind without a schema
# is an error too).
kubeconform() {
  "$tools/kubeconform" -strict -summary \
    -schema-location "$tmp/schemas/{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json" "$@"
}
# kube_score FILE: its findings as lines "kind<TAB>name<TAB>check<TAB>summary<TAB>grade" (grade 1
# critical, 5 warning).
kube_score() {
  { "$tools/kube-score" score --kubernetes-version v1.37 -o json \
    --enable-optional-test container-seccomp-profile --enable-optional-test container-ports-check "$1" || true; } |
    jq -r '.[] | .type_meta.kind as $k | .object_meta.name as $n | .checks[]
      | select(.skipped != true and .grade < 10) | .check.id as $id | .grade as $g
      | ((.comments // []) | if length == 0 then [{summary: ""}] else . end)[]
      | [$k, $n, $id, .summary, $g] | @tsv'
}
# unaccepted: the findings (stdin) that kube-score-accepted.tsv does not list.
unaccepted() {
  awk -F'\t' 'NR == FNR { if ($0 !~ /^#/ && NF >= 4) ok[$1 FS $2 FS $3] = 1; next }
    !(($3 FS $1 FS $4) in ok)' "$accepted" -
}
# own_checks FILE: what the linters do not check, one line per fault.
own_checks() {
  yq -c 'select(. != null)' "$1" | jq -r --arg v "$version" '
    "\(.kind)/\(.metadata.name)" as $o
    | (select(.metadata.labels["app.kubernetes.io/name"] != "appservice-operator"
              or .metadata.labels["app.kubernetes.io/version"] != $v)
       | "\($o): no app.kubernetes.io/name=appservice-operator and app.kubernetes.io/version=\($v) label"),
      (select(.kind == "PodDisruptionBudget" and .spec.unhealthyPodEvictionPolicy != "AlwaysAllow")
       | "\($o): unhealthyPodEvictionPolicy is not AlwaysAllow (unready Pods block a drain)"),
      (select(.kind == "Deployment" and (.spec.replicas // 1) > 1) | .spec.selector.matchLabels as $sel
       | select([.spec.template.spec.topologySpreadConstraints[]?
                 | select(.topologyKey == "kubernetes.io/hostname" and .labelSelector.matchLabels == $sel)]
                | length == 0)
       | "\($o): no topology spread over kubernetes.io/hostname counting its own Pods (selector \($sel | tojson))")'
}

errors=0
row() { printf '%-30s %-33s %-21s %s\n' "$@"; }
row rendering "kubeconform -strict" "kube-score crit/warn" "new findings + own-check faults"
for r in "${renderings[@]}"; do
  name=$(basename "$r" .yaml)
  if ! kubeconform "$r" >"$tmp/$name.kubeconform" 2>&1; then
    errors=$((errors + 1))
    echo "FAIL: kubeconform $name: $(cat "$tmp/$name.kubeconform")" >&2
  fi
  summary=$(sed -n 's/^Summary: \([0-9]*\) resources.*Invalid: \([0-9]*\), Errors: \([0-9]*\).*/\1 objects, \2 invalid, \3 errors/p' \
    "$tmp/$name.kubeconform")
  kube_score "$r" >"$tmp/$name.kube-score"
  unaccepted <"$tmp/$name.kube-score" >"$tmp/$name.new"
  own_checks "$r" >>"$tmp/$name.new"
  if [ -s "$tmp/$name.new" ]; then
    errors=$((errors + 1))
    echo "FAIL: $name: kube-score findings that $accepted does not list, or own-check faults:" >&2
    cat "$tmp/$name.new" >&2
  fi
  row "$name" "$summary" "$(awk -F'\t' '$5 == 1' "$tmp/$name.kube-score" | wc -l)/$(awk -F'\t' '$5 == 5' "$tmp/$name.kube-score" | wc -l)" \
    "$(wc -l <"$tmp/$name.new")"
done
[ "$errors" = 0 ] || fail "$errors rendering(s) with kubeconform errors, new kube-score findings or own-check faults"

# The AppService samples against our CRD's schema.
kubeconform deploy/samples/*.yaml || fail "deploy/samples do not validate against the AppService CRD"

# Every accepted finding is still produced somewhere (else the list hides nothing and goes stale).
while IFS=$'\t' read -r id kind summary _; do
  [[ $id == \#* || -z $id ]] && continue
  awk -F'\t' -v id="$id" -v k="$kind" -v s="$summary" '$3 == id && $1 == k && $4 == s {found = 1} END {exit !found}' \
    "$tmp"/*.kube-score || fail "$accepted: no rendering has '$id $kind: $summary' any more: remove the line"
done <"$accepted"

# helm lint --strict, default and every switch on.
for set in "" "$switches"; do
  "$helm" lint --strict charts/appservice-operator ${set:+--set "$set"} >"$tmp/lint" 2>&1 ||
    fail "helm lint --strict ${set:+--set $set}: $(cat "$tmp/lint")"
  echo "helm lint --strict${set:+ (every switch)}: $(grep -c '^\[\(WARNING\|ERROR\)\]' "$tmp/lint" || true) warnings/errors, $(sed -n 's/^\(1 chart(s) linted.*\)/\1/p' "$tmp/lint")"
done

# Teeth. kubeconform: an unknown field in a Deployment's container and in a ServiceMonitor.
sed 's/^        imagePullPolicy: IfNotPresent$/&\n        notAField: 1/; s/^  - authorization:$/  - alsoNotAField: 1\n    authorization:/' \
  "$tmp/r/kustomize-deploy-monitored.yaml" >"$tmp/bad.yaml"
if kubeconform "$tmp/bad.yaml" >"$tmp/bad.out" 2>&1; then fail "kubeconform accepted unknown fields"; fi
grep "'notAField' not allowed" "$tmp/bad.out" >/dev/null && grep "'alsoNotAField' not allowed" "$tmp/bad.out" >/dev/null ||
  fail "kubeconform did not name both planted fields: $(cat "$tmp/bad.out")"
# kube-score: a container that may write its root filesystem is a new finding.
sed 's/readOnlyRootFilesystem: true/readOnlyRootFilesystem: false/' "$tmp/r/kustomize-deploy.yaml" >"$tmp/bad.yaml"
kube_score "$tmp/bad.yaml" | unaccepted >"$tmp/bad.out"
grep container-security-context-readonlyrootfilesystem "$tmp/bad.out" >/dev/null ||
  fail "a writable root filesystem is not a new kube-score finding: $(cat "$tmp/bad.out")"
# Own checks: the faults of issue 43 planted back (a shard's spread counting every shard's Pods,
# the PDB's default policy, a CRD without labels).
yq -y 'select(. != null)
  | if .kind == "Deployment" then .spec.template.spec.topologySpreadConstraints[0].labelSelector.matchLabels = {"app.kubernetes.io/name": "appservice-operator"}
    elif .kind == "PodDisruptionBudget" then del(.spec.unhealthyPodEvictionPolicy)
    elif .kind == "CustomResourceDefinition" then del(.metadata.labels) else . end' \
  "$tmp/r/kustomize-deploy-shards.yaml" >"$tmp/bad.yaml"
own_checks "$tmp/bad.yaml" >"$tmp/bad.out"
for fault in "Deployment/appservice-operator-shard-a: no topology spread" "Deployment/appservice-operator-shard-b: no topology spread" \
  "PodDisruptionBudget/appservice-operator: unhealthyPodEvictionPolicy" "CustomResourceDefinition/appservices.app.example.com: no app.kubernetes.io/name"; do
  grep -F "$fault" "$tmp/bad.out" >/dev/null || fail "the own checks missed '$fault': $(cat "$tmp/bad.out")"
done
echo "teeth: kubeconform names planted fields, kube-score flags a new finding, the own checks catch issue 43's faults"
echo "PASS: admin_linters"
