#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A HorizontalPodAutoscaler targets the AppService, not its Deployment: it scales through the
# AppService's scale subresource (spec.size, status.replicas, status.selector), and the operator
# carries the size to the Deployment. Without a metrics server here, the HPA's bounds do the
# scaling (a size below minReplicas is raised to it, before any metric is read), which is the
# path every HPA takes to write a scale. An HPA aimed at the Deployment instead would fight
# spec.size: the operator puts the Deployment's replicas back (docs/status.md).
source "$(dirname "$0")/lib/common.sh"
cd "${ASOP_SOURCE_DIR:?}"
new_namespace hpa
trap 'stop_all_operators; kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true' EXIT
kubectl apply -f crds/ >/dev/null
wait_established appservices.app.example.com
jp() { kubectl -n "$ns" get "$1" -o jsonpath="$2"; }
start_operator main --namespace "$ns"
kubectl -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: app.example.com/v1
kind: AppService
metadata: {name: web}
spec: {size: 1, image: nginx:1.27}
YAML
eventually 90 value_is 1 jp appservice/web '{.status.readyReplicas}'
kubectl -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: app.example.com/v1, kind: AppService, name: web}
  minReplicas: 3
  maxReplicas: 5
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}
YAML
eventually 90 value_is 3 jp appservice/web '{.spec.size}'
eventually 90 value_is 3 jp deployment/web '{.spec.replicas}'
eventually 90 value_is 3 jp appservice/web '{.status.readyReplicas}'
eventually 90 value_is 3 jp hpa/web '{.status.currentReplicas}'
echo "HPA minReplicas 3: spec.size $(jp appservice/web '{.spec.size}'), Deployment $(jp deployment/web '{.spec.replicas}'), ready $(jp appservice/web '{.status.readyReplicas}'), HPA sees $(jp hpa/web '{.status.currentReplicas}')"
# Scaled by hand to 5 (inside the HPA's bounds): the HPA reads the new size through the same
# subresource (no metrics here, so it keeps it).
kubectl -n "$ns" scale appservice/web --replicas=5 >/dev/null
eventually 90 value_is 5 jp deployment/web '{.spec.replicas}'
eventually 90 value_is 5 jp hpa/web '{.status.currentReplicas}'
echo "PASS: operator_hpa"
