#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A node drain under deploy/shards, as drain_test.sh does for dist/install.yaml: on a control plane
# of its own with two fake nodes (kwok), each shard's topology spread puts its two replicas on
# different nodes (one node lost never takes a shard's leader and standby together); `kubectl
# drain` of one node evicts one replica of each shard while every shard keeps a Ready replica the
# whole time (sampled every 0.2 s, and only when kubectl answered), and both shards are whole
# again on the other node. The PodDisruptionBudget selects every shard's Pods, so the drain evicts
# them one at a time. (kwok's Pods do not run the binary: this proves the scheduling and
# disruption rules; operator_shards_test.sh proves the shards' work.)
# ctest: processors 2
source "$(dirname "$0")/faults/lib.sh"
own_controlplane
sed 's/kwok-node-0/kwok-node-1/g' test/controlplane/fake-node.yaml | kubectl apply -f - >/dev/null
kubectl wait --for=condition=Ready node/kwok-node-1 --timeout=120s >/dev/null
# Ready is not yet schedulable: the node keeps its not-ready taint until the node lifecycle
# controller's next pass (see drain_test.sh).
eventually 120 value_is "" kubectl get node kwok-node-1 -o jsonpath='{.spec.taints}'
kubectl apply -k deploy/shards >/dev/null
sys=appservice-system shards="a b"
for s in $shards; do kubectl -n "$sys" rollout status "deployment/appservice-operator-shard-$s" --timeout=180s >/dev/null; done
# replicas: "shard node ready deleting" for each operator Pod.
replicas() { kubectl -n "$sys" get pods -l app.kubernetes.io/name=appservice-operator \
  -o jsonpath='{range .items[*]}{.metadata.labels.app\.example\.com/shard} {.spec.nodeName} {.status.conditions[?(@.type=="Ready")].status} {.metadata.deletionTimestamp}{"\n"}{end}'; }
for s in $shards; do
  spread=$(replicas | awk -v s="$s" '$1 == s {print $2}' | sort -u | wc -l)
  [ "$spread" = 2 ] || fail "shard $s's two replicas are not on two nodes: $(replicas | tr '\n' ';')"
done
echo "each shard's replicas on both nodes: $(replicas | awk '{print $1 "@" $2}' | sort | tr '\n' ' ')"

# A sample: the fewest Ready (and not deleting) replicas of any shard, taken only when kubectl
# answered.
fewest_ready() {
  local out
  out=$(replicas) && awk -v shards="$shards" '$3 == "True" && $4 == "" {n[$1]++}
    END {split(shards, s, " "); min = 99; for (i in s) if (n[s[i]] + 0 < min) min = n[s[i]] + 0; print min}' <<<"$out"
}
source "$(dirname "$0")/lib/samples.sh"
samples=$OP_LOG_DIR/fewest-ready
sample_start "$samples" fewest_ready
trap 'kill "$sampler" 2>/dev/null || true; cleanup' EXIT
kubectl drain kwok-node-0 --ignore-daemonsets --delete-emptydir-data --timeout=150s >"$OP_LOG_DIR/drain.log" 2>&1 ||
  fail "kubectl drain failed: $(cat "$OP_LOG_DIR/drain.log")"
for s in $shards; do kubectl -n "$sys" rollout status "deployment/appservice-operator-shard-$s" --timeout=120s >/dev/null; done
sample_stop "$samples"
min=$sample_min
[ "$min" -ge 1 ] || fail "a shard had no Ready replica at some point of the drain (samples: $(tr '\n' ' ' <"$samples"))"
[ "$sample_last" = 2 ] || fail "the shards are not whole after the drain (samples: $(tr '\n' ' ' <"$samples"))"
replicas | awk '$2 == "kwok-node-0" {bad = 1} END {exit bad}' || fail "a replica still runs on the drained node: $(replicas)"
evicted=$(grep -c 'evicted' "$OP_LOG_DIR/drain.log" || true)
[ "$evicted" = 2 ] || fail "the drain evicted $evicted Pods, not one of each shard: $(cat "$OP_LOG_DIR/drain.log")"
echo "drain of kwok-node-0: evicted 2 replicas (one per shard); every shard kept >= $min Ready replica ($(wc -l <"$samples") samples)"
echo "PASS: drain_shards"
