#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Two shards from deploy/shards split 200 AppServices: each process runs with the --label-selector
# and --leader-election-id of its Deployment in the overlay; every AppService converges, each is
# reconciled by exactly the shard its label names, and none by both (per-object reconciles counted
# from the shards' -v 1 logs, totals from their metrics).
source "$(dirname "$0")/lib/common.sh"
cd "${ASOP_SOURCE_DIR:?}"
count=200
new_namespace shards
# On failure the shards are gone before the AppServices: drop the finalizers, or the namespace
# never goes away (and other operators on the cluster would have to clean it up).
unfinalize() {
  kubectl get appservices -n "$ns" -o name 2>/dev/null |
    xargs -r kubectl patch -n "$ns" --type merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1 || true
}
trap 'stop_all_operators; unfinalize; kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true' EXIT
kubectl apply -f crds/ >/dev/null
wait_established appservices.app.example.com

# The overlay's shard flags, per Deployment.
rendered=$(kubectl kustomize deploy/shards)
shard_flag() { # SHARD FLAG: the value of --FLAG in shard SHARD's Deployment
  awk -v d="appservice-operator-shard-$1" -v f="--$2=" '
    /^kind: / {dep = ""} $1 == "name:" && $2 == d {dep = d}
    dep != "" && index($2, f) == 1 {print substr($2, length(f) + 1); exit}' <<<"$rendered"
}
for s in a b; do
  sel=$(shard_flag "$s" label-selector); id=$(shard_flag "$s" leader-election-id)
  [ -n "$sel" ] && [ -n "$id" ] || fail "deploy/shards: shard $s lacks --label-selector or --leader-election-id"
  printf -v "SEL_$s" '%s' "$sel"; printf -v "ID_$s" '%s' "$id"
done
[ "$SEL_a" != "$SEL_b" ] && [ "$ID_a" != "$ID_b" ] || fail "the shards share a selector or a Lease"
label_key=${SEL_a%%=*}
[ "$label_key" = "${SEL_b%%=*}" ] || fail "the shards select on different labels"

for s in a b; do
  sel=SEL_$s id=ID_$s
  start_operator "shard_$s" --namespace "$ns" --label-selector "${!sel}" --leader-elect \
    --leader-election-namespace "$ns" --leader-election-id "${!id}" -v 1
done

# Half the AppServices per shard, interleaved.
for i in $(seq "$count"); do
  s=a; [ $(( i % 2 )) = 0 ] && s=b
  sel=SEL_$s
  printf -- '---\napiVersion: app.example.com/v1\nkind: AppService\nmetadata: {name: app-%03d, labels: {%s: "%s"}}\nspec: {size: 0, image: "nginx:1.27", ports: [{port: 80}]}\n' \
    "$i" "$label_key" "${!sel#*=}"
done | kubectl apply -n "$ns" -f - >/dev/null
available() {
  kubectl get appservices -n "$ns" -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Available")].status}{"\n"}{end}' |
    grep -c '^True$' || true
}
eventually 300 value_is "$count" available

# Who reconciled what: names from each shard's log, and the labels the objects carry.
reconciled() { grep -o "namespace=$ns name=[^ ]* reconcileID=[^ ]* reconciled" "$OP_LOG_DIR/shard_$1.log" | awk '{print $2}' | sed 's/^name=//' | sort -u; }
labelled() { kubectl get appservices -n "$ns" -l "$1" -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort; }
reconciled a > "$OP_LOG_DIR/a.names"; reconciled b > "$OP_LOG_DIR/b.names"
both=$(comm -12 "$OP_LOG_DIR/a.names" "$OP_LOG_DIR/b.names" | wc -l)
[ "$both" = 0 ] || fail "$both AppServices reconciled by both shards: $(comm -12 "$OP_LOG_DIR/a.names" "$OP_LOG_DIR/b.names" | sed -n 1,5p | tr '\n' ' ')"
diff <(labelled "$SEL_a") "$OP_LOG_DIR/a.names" >/dev/null || fail "shard a did not reconcile exactly the AppServices labelled $SEL_a"
diff <(labelled "$SEL_b") "$OP_LOG_DIR/b.names" >/dev/null || fail "shard b did not reconcile exactly the AppServices labelled $SEL_b"
[ "$(sort -u "$OP_LOG_DIR/a.names" "$OP_LOG_DIR/b.names" | wc -l)" = "$count" ] || fail "some AppServices were reconciled by no shard"

# The metrics agree: each shard reconciled at least its half, and both are leaders of their Lease.
for s in a b; do
  port=OP_METRICS_shard_$s
  body=$(metrics "${!port}")
  total=$(awk '/^controller_runtime_reconcile_total\{/ {t += $NF} END {print t + 0}' <<<"$body")
  [ "$total" -ge $(( count / 2 )) ] || fail "shard $s: controller_runtime_reconcile_total $total < $(( count / 2 ))"
  grep -q '^leader_election_master_status{.*} 1$' <<<"$body" || fail "shard $s is not the leader of its Lease"
  echo "shard $s: $(wc -l < "$OP_LOG_DIR/$s.names") AppServices, $total reconciles"
done
kubectl get lease -n "$ns" "$ID_a" "$ID_b" >/dev/null || fail "the shards' Leases are missing"

# Clean up while both run, so each removes the finalizers of its own.
kubectl delete appservices --all -n "$ns" --wait=true --timeout=300s >/dev/null
echo "PASS: operator_shards"
