#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The AppService CRD as the API server enforces it: samples apply, invalid objects are refused with
# a message naming the field, defaults are filled in, printer columns and short names work.
# Needs no operator. Re-applies crds/ but never deletes the CRD (other tests use it).
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/lib/common.sh"
root=${ASOP_SOURCE_DIR:-$(cd "$here/../.." && pwd)}

kubectl apply -f "$root/crds/" >/dev/null
wait_established appservices.app.example.com

new_namespace crd-validation

# The samples, the opdemo one unchanged, must be accepted.
for sample in "$root"/deploy/samples/*.yaml; do
  kubectl apply -n "$ns" -f "$sample" >/dev/null || fail "sample refused: $sample"
done

# refused NAME PATTERN SPEC: creating NAME with SPEC must fail with stderr matching PATTERN.
refused() {
  local name=$1 pattern=$2 spec=$3 err
  if err=$(printf 'apiVersion: app.example.com/v1\nkind: AppService\nmetadata: {name: %s}\nspec:\n%s\n' \
      "$name" "$spec" | kubectl create -n "$ns" -f - 2>&1 >/dev/null); then
    fail "$name: accepted, expected a refusal matching '$pattern'"
  fi
  grep -qE -- "$pattern" <<<"$err" || fail "$name: refused, but the message does not match '$pattern': $err"
}

refused no-image 'spec\.image: Required value' '  size: 1'
refused empty-image 'spec\.image' '  image: ""'
refused negative-size 'spec\.size: Invalid value: -1' '  image: nginx
  size: -1'
refused port-zero 'spec\.ports\[0\]\.port: Invalid value: 0' '  image: nginx
  ports: [{port: 0}]'
refused port-too-big 'spec\.ports\[0\]\.port: Invalid value: 70000' '  image: nginx
  ports: [{port: 70000}]'
refused bad-service-type 'spec\.serviceType: Unsupported value: "ExternalName"' '  image: nginx
  serviceType: ExternalName'
refused nodeport-clusterip 'spec\.serviceType: Forbidden: spec\.ports\[\]\.nodePort' '  image: nginx
  serviceType: ClusterIP
  ports: [{port: 80, nodePort: 30080}]'
refused nodeport-range 'spec\.ports\[0\]\.nodePort: Invalid value: 70000' '  image: nginx
  ports: [{port: 80, nodePort: 70000}]'
refused named-target-two-protocols 'a named target port names one container port' '  image: nginx
  ports: [{port: 53, name: t, targetPort: dns}, {port: 53, name: u, protocol: UDP, targetPort: dns}]'
# resources.claims would name a Pod-level resourceClaims entry an AppService cannot declare: not in
# the schema, so kubectl's strict field validation refuses it.
refused claims 'unknown field "spec\.resources\.claims"' '  image: nginx
  resources: {claims: [{name: gpu}]}'
refused unnamed-ports 'spec\.ports: Required value: spec\.ports\[\]\.name is required' '  image: nginx
  ports: [{port: 80}, {port: 81}]'
refused duplicate-names 'spec\.ports\[\]\.name must be unique' '  image: nginx
  ports: [{name: web, port: 80}, {name: web, port: 81}]'
refused duplicate-ports 'spec\.ports\[1\]: Duplicate value' '  image: nginx
  ports: [{name: a, port: 80}, {name: b, port: 80}]'
refused target-port-zero 'spec\.ports\[0\]\.targetPort' '  image: nginx
  ports: [{port: 80, targetPort: 0}]'
refused lb-without-ports 'spec\.ports: Required value' '  image: nginx
  serviceType: LoadBalancer'
refused bad-quantity 'spec\.resources\.limits\.cpu' '  image: nginx
  resources: {limits: {cpu: lots}}'
refused env-value-and-from 'spec\.envs\[0\]' '  image: nginx
  envs: [{name: A, value: b, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]'
refused 9-not-dns1035 'metadata\.name must be a DNS-1035 label' '  image: nginx'

# Defaults: size 1 and protocol TCP are filled in by the API server.
printf 'apiVersion: app.example.com/v1\nkind: AppService\nmetadata: {name: defaults}\nspec:\n  image: nginx\n  ports: [{port: 8080}]\n' |
  kubectl create -n "$ns" -f - >/dev/null
size=$(kubectl get appservice defaults -n "$ns" -o jsonpath='{.spec.size}')
[ "$size" = 1 ] || fail "spec.size default: got '$size', want 1"
protocol=$(kubectl get appservice defaults -n "$ns" -o jsonpath='{.spec.ports[0].protocol}')
[ "$protocol" = TCP ] || fail "spec.ports[0].protocol default: got '$protocol', want TCP"

# The opdemo sample is stored as written.
[ "$(kubectl get appservice nginx-app -n "$ns" -o jsonpath='{.spec.size}/{.spec.image}/{.spec.ports[0].nodePort}')" = "2/nginx:1.7.9/30002" ] ||
  fail "nginx-app sample not stored as written"

# Printer columns and short names. Output goes through variables: with pipefail, a reader that
# stops early (head, grep -q) would fail the test through kubectl's SIGPIPE.
table=$(kubectl get appservices -n "$ns")
header=$(head -n 1 <<<"$table")
for column in NAME IMAGE DESIRED READY AVAILABLE AGE; do
  grep -qw "$column" <<<"$header" || fail "kubectl get appservices: no $column column in '$header'"
done
grep -qE '^nginx-app +nginx:1\.7\.9 +2 ' <<<"$table" ||
  fail "kubectl get appservices: nginx-app row lacks image and desired size"
kubectl get appsvc -n "$ns" nginx-app >/dev/null || fail "short name appsvc"
kubectl get asvc -n "$ns" nginx-app >/dev/null || fail "short name asvc"
grep -q 'appservice.app.example.com/nginx-app' <<<"$(kubectl get apps-example -n "$ns" -o name)" ||
  fail "category apps-example"

# The scale subresource reads and writes spec.size.
kubectl scale appservice/nginx-app -n "$ns" --replicas=3 >/dev/null
[ "$(kubectl get appservice nginx-app -n "$ns" -o jsonpath='{.spec.size}')" = 3 ] || fail "kubectl scale did not set spec.size"

# kubectl explain, from the API server's published schema: every field has its description.
explained=$(kubectl explain appservice.spec.ports) || fail "kubectl explain appservice.spec.ports"
for text in 'Ports of the Service' 'The port that will be exposed by this service' \
  'Number or name of the port to access on the pods' 'The IP protocol for this port'; do
  grep -q "$text" <<<"$explained" || fail "kubectl explain appservice.spec.ports lacks \"$text\":
$explained"
done
# (Read whole before grep: with pipefail, grep -q closing the pipe early fails kubectl.)
reason=$(kubectl explain appservice.status.conditions.reason)
grep -q 'programmatic identifier' <<<"$reason" ||
  fail "kubectl explain appservice.status.conditions.reason has no description: $reason"
key=$(kubectl explain appservice.spec.envs.valueFrom.secretKeyRef.key)
grep -q 'The key of the secret' <<<"$key" || fail "kubectl explain reaches no description four levels down: $key"
echo "kubectl explain appservice.spec.ports:"; sed -n '1,12p' <<<"$explained"

echo "PASS: crd_validation"
