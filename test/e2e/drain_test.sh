#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A node drain, as a cluster admin upgrades nodes: dist/install.yaml on a control plane of its own
# with two fake nodes (kwok). The topology spread puts the two operator replicas on different
# nodes; `kubectl drain` of one node evicts its replica while the other stays Ready the whole time
# (sampled every 0.2 s), and the Deployment is whole again on the other node. The
# PodDisruptionBudget (maxUnavailable 1) refuses a second eviction while one replica is down (its
# replacement unschedulable), so a drain never takes both. (kwok's Pods do not run the binary: the leader's own hand-over is proven
# by operator_leader_election_test.sh; this proves the scheduling and disruption rules.)
# ctest: processors 2
source "$(dirname "$0")/faults/lib.sh"
own_controlplane
sed 's/kwok-node-0/kwok-node-1/g' test/controlplane/fake-node.yaml | kubectl apply -f - >/dev/null
kubectl wait --for=condition=Ready node/kwok-node-1 --timeout=120s >/dev/null
# Ready is not yet schedulable: a new node keeps its not-ready taint until the node lifecycle
# controller's next pass; scheduled before that, both replicas would land on kwok-node-0.
eventually 120 value_is "" kubectl get node kwok-node-1 -o jsonpath='{.spec.taints}'
kubectl apply -f dist/install.yaml >/dev/null
sys=appservice-system
kubectl -n "$sys" rollout status deployment/appservice-operator --timeout=180s >/dev/null
pods() { kubectl -n "$sys" get pods -l app.kubernetes.io/name=appservice-operator \
  -o jsonpath='{range .items[*]}{.metadata.name} {.spec.nodeName} {.status.conditions[?(@.type=="Ready")].status} {.metadata.deletionTimestamp}{"\n"}{end}'; }
nodes=$(pods | awk '{print $2}' | sort -u | wc -l)
[ "$nodes" = 2 ] || fail "the two replicas are not spread over the two nodes: $(pods); taints: $(kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}={.spec.taints} {end}')"

# Drain the first replica's node while sampling how many replicas are Ready (lib/samples.sh: the
# samples cover the drain, from before it starts to after the Deployment is whole again).
source "$(dirname "$0")/lib/samples.sh"
ready_count() { local out; out=$(pods) && awk '$3 == "True" && $4 == "" {n++} END {print n+0}' <<<"$out"; }
node=$(pods | awk 'NR == 1 {print $2}')
samples=$OP_LOG_DIR/ready-samples
sampler=""
trap '[ -z "$sampler" ] || kill "$sampler" 2>/dev/null || true; cleanup' EXIT
sample_start "$samples" ready_count
kubectl drain "$node" --ignore-daemonsets --delete-emptydir-data --timeout=120s >"$OP_LOG_DIR/drain.log" 2>&1 ||
  fail "kubectl drain failed: $(cat "$OP_LOG_DIR/drain.log")"
kubectl -n "$sys" rollout status deployment/appservice-operator --timeout=120s >/dev/null
sample_stop "$samples"
min=$sample_min
[ "$min" -ge 1 ] || fail "no operator replica was Ready at some point of the drain (samples: $(tr '\n' ' ' <"$samples"))"
[ "$sample_last" = 2 ] || fail "the Deployment is not whole after the drain (samples: $(tr '\n' ' ' <"$samples"))"
pods | awk -v n="$node" '$2 == n {bad = 1} END {exit bad}' || fail "a replica still runs on the drained node: $(pods)"
echo "drain of $node: evicted $(grep -c 'evicted' "$OP_LOG_DIR/drain.log" || true) replica(s); Ready replicas never fewer than $min ($(wc -l <"$samples") samples)"

# The PodDisruptionBudget: two evictions back to back, the second refused. Both nodes cordoned,
# so the first one's replacement stays Pending (kwok would make it Ready within milliseconds and
# the budget would allow the second): one replica down, as during a slow drain.
kubectl cordon kwok-node-0 kwok-node-1 >/dev/null
mapfile -t names < <(pods | awk '{print $1}')
[ "${#names[@]}" = 2 ] || fail "want 2 replicas, got: $(pods)"
evict() {
  kubectl create --raw "/api/v1/namespaces/$sys/pods/$1/eviction" -f - <<JSON 2>&1
{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"$1","namespace":"$sys"}}
JSON
}
eventually 60 value_is 1 kubectl -n "$sys" get pdb appservice-operator -o jsonpath='{.status.disruptionsAllowed}'
first=$(evict "${names[0]}") || fail "the first eviction was refused: $first"
if second=$(evict "${names[1]}"); then fail "a second eviction was allowed while one replica is down"; fi
grep -q 'disruption budget' <<<"$second" || fail "the second eviction failed for another reason: $second"
echo "PodDisruptionBudget: second eviction refused: $(tr '\n' ' ' <<<"$second" | cut -c 1-200)"
echo "PASS: drain"
