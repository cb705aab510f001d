#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Churn soak: AppServices created, updated and deleted in waves (SOAK_OBJECTS in SOAK_WAVES waves,
# default 200 in 3; test/soak.sh runs 1,000 in 10). Each wave creates its batch, changes every
# image, then deletes the batch. At the end: no leaked children, no stuck finalizer, no crash, no
# write at rest, and the operator's RSS after the last wave within 10% of its RSS after the first
# (nothing grows per object seen). Only load, no fault: runs on the shared control plane.
# ctest: processors 2
source "$(dirname "$0")/lib.sh"
shared_controlplane fault-churn
objects=${SOAK_OBJECTS:-200} waves=${SOAK_WAVES:-3}
per_wave=$(( (objects + waves - 1) / waves ))
start_operator main --namespace "$ns" -v=1  # each write logged: printed if the writes do not settle
pid=$OP_PID_main
port=$OP_METRICS_main

# batch WAVE IMAGE: the wave's AppServices, labelled wave=WAVE.
batch() {
  for i in $(seq "$per_wave"); do
    printf -- '---\napiVersion: app.example.com/v1\nkind: AppService\nmetadata: {name: w%d-%04d, labels: {wave: "%d"}}\nspec: {size: 0, image: "%s", ports: [{port: 80}]}\n' "$1" "$i" "$1" "$2"
  done
}
# converged_count WAVE IMAGE: AppServices of the wave whose status saw their generation and whose
# Deployment runs IMAGE and Service exists (one list per kind, not one get per object).
converged_count() {
  local observed deps svcs
  observed=$(k get appservices -l "wave=$1" -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.generation} {.status.observedGeneration}{"\n"}{end}' |
    awk '$2 == $3 {print $1}')
  deps=$(k get deployments -o jsonpath='{range .items[*]}{.metadata.name} {.spec.template.spec.containers[0].image}{"\n"}{end}' |
    awk -v img="$2" '$2 == img {print $1}')
  svcs=$(k get services -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}')
  sort <(echo "$observed") <(echo "$deps") <(echo "$svcs") | uniq -c | awk '$1 == 3 && NF == 2' | grep -c . || true
}
# left WAVE: AppServices, Deployments and Services of the wave that still exist.
left() { k get appservices,deployments,services -o name | grep -c "/w$1-" || true; }
rss() { metric "$port" process_resident_memory_bytes; }

start_ms=$(now_ms)
rss_first=0 rss_last=0
for wave in $(seq "$waves"); do
  batch "$wave" nginx:1.27 | k apply -f - >/dev/null
  eventually 300 value_is "$per_wave" converged_count "$wave" nginx:1.27
  batch "$wave" nginx:1.28 | k apply -f - >/dev/null
  eventually 300 value_is "$per_wave" converged_count "$wave" nginx:1.28
  if [ "$wave" = "$waves" ]; then
    writes_settled "$port"
  fi
  k delete appservices -l "wave=$wave" --wait=false >/dev/null
  eventually 300 value_is 0 left "$wave"
  running "$pid" || fail "operator crashed in wave $wave"
  # Measured at rest, so every wave is compared in the same state: the wave's work all done.
  writes_settled "$port"
  rss_last=$(rss)
  [ "$wave" = 1 ] && rss_first=$rss_last
  echo "wave $wave: $per_wave AppServices created, updated, deleted; RSS $(( rss_last / 1024 )) KiB"
done
churn_ms=$(( $(now_ms) - start_ms ))

leaked=$(k get deployments,services -l app.kubernetes.io/managed-by=appservice-operator -o name | grep -c . || true)
[ "$leaked" = 0 ] || fail "$leaked leaked children"
[ "$(stuck_finalizers)" = 0 ] || fail "finalizer stuck"
panics=$(metric "$port" controller_runtime_reconcile_panics_total)
[ "$panics" = 0 ] || fail "$panics reconciles threw"
running "$pid" || fail "operator crashed"
writes_settled "$port"
growth_pct=$(( (rss_last - rss_first) * 100 / rss_first ))
# ASan's allocator quarantines freed memory: its RSS says nothing about leaks (LeakSanitizer does).
if ldd "$ASOP_BINARY" 2>/dev/null | grep libasan >/dev/null; then
  echo "RSS not compared: $ASOP_BINARY is built with AddressSanitizer"
else
  [ $(( rss_last * 10 )) -le $(( rss_first * 11 )) ] ||
    fail "RSS grew from $rss_first to $rss_last bytes (${growth_pct}%) between the first and the last wave"
fi
requests=$(metric "$port" rest_client_requests_total)
errors=$(metric "$port" controller_runtime_reconcile_errors_total)
echo "figures: recover=$(secs "$churn_ms") ($(( per_wave * waves )) AppServices in $waves waves) requests=$requests errors=$errors leaks=$leaked stuck_finalizers=0 crashes=0 writes_at_rest=0 rss_first_wave=$(( rss_first / 1024 ))KiB rss_last_wave=$(( rss_last / 1024 ))KiB rss_growth=${growth_pct}%"
echo "PASS: churn_soak"
