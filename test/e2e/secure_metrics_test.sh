#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# --metrics-secure through the binary, as a user deploys it: the operator runs with the deploy/
# ServiceAccount's own RBAC (a token kubeconfig, no admin), serves /metrics over HTTPS, and asks
# the API server about every token: none gives 401, one without the metrics-reader role 403, one
# bound to appservice-operator-metrics-reader 200. Decisions are cached (reviews counted in
# metrics_auth_reviews_total); a flood of bad tokens gets 401/429 while the operator stays ready
# and reconciles. A certificate directory is served and reloaded when rotated; an unreadable one
# is a one-line start-up error. Prints the scrape latency, cold and warm, and reviews per scrape.
# ctest: asan
source "$(dirname "$0")/lib/common.sh"
cd "${ASOP_SOURCE_DIR:?}"
new_namespace secmet
binding=secmet-$ns
work=$(mktemp -d /tmp/asop-secmet.XXXXXX)
cleanup() {
  stop_all_operators
  kubectl delete clusterrolebinding "$binding" --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

kubectl apply -f crds/ -f deploy/base/namespace.yaml -f deploy/base/rbac.yaml >/dev/null
wait_established appservices.app.example.com
eventually 60 kubectl -n appservice-system get serviceaccount appservice-operator
kubectl -n "$ns" create serviceaccount scraper >/dev/null
kubectl -n "$ns" create serviceaccount nobody >/dev/null
kubectl create clusterrolebinding "$binding" --clusterrole=appservice-operator-metrics-reader \
  --serviceaccount="$ns:scraper" >/dev/null

# The operator's own identity: a kubeconfig with the deploy/ ServiceAccount's token.
server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
kubectl config view --minify --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' |
  base64 -d >"$work/ca.crt"
[ -s "$work/ca.crt" ] || cp "$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.certificate-authority}')" "$work/ca.crt"
cat >"$work/kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "$server", certificate-authority: $work/ca.crt}}]
users: [{name: operator, user: {token: "$(kubectl -n appservice-system create token appservice-operator --duration 1h)"}}]
contexts: [{name: c, context: {cluster: c, user: operator}}]
current-context: c
YAML
scraper=$(kubectl -n "$ns" create token scraper --duration 1h)
nobody=$(kubectl -n "$ns" create token nobody --duration 1h)

OP_KUBECONFIG=$work/kubeconfig start_operator sec --namespace "$ns" --metrics-secure
port=$OP_METRICS_sec
url=https://127.0.0.1:$port/metrics
# code [TOKEN]: the HTTP status of one scrape (000 when no HTTP answer came).
code() {
  local auth=()
  [ $# -eq 0 ] || auth=(-H "Authorization: Bearer $1")
  curl -k -s -o /dev/null -w '%{http_code}' --max-time 10 "${auth[@]}" "$url" || true
}
# seconds TOKEN: the time one scrape takes, whole.
seconds() { curl -k -s -o /dev/null -w '%{time_total}' --max-time 10 -H "Authorization: Bearer $1" "$url"; }

[ "$(code)" = 401 ] || fail "no token: want 401, got $(code)"
[ "$(code not-a-token)" = 401 ] || fail "a bad token: want 401"
[ "$(code "$nobody")" = 403 ] || fail "a token without the metrics-reader role: want 403, got $(code "$nobody")"
cold=$(seconds "$scraper")
body=$(curl -k -sS --max-time 10 -H "Authorization: Bearer $scraper" "$url") || fail "scrape failed"
grep -q '^controller_runtime_reconcile_total' <<<"$body" || fail "no controller_runtime_reconcile_total in /metrics"
warm=()
for _ in $(seq 10); do warm+=("$(seconds "$scraper")"); done
warm_median=$(printf '%s\n' "${warm[@]}" | sort -n | sed -n 5p)
# Plain HTTP on the HTTPS port gets nothing.
if curl -fsS --max-time 5 "http://127.0.0.1:$port/metrics" 2>/dev/null | grep controller_runtime >/dev/null; then
  fail "metrics served over plain HTTP"
fi

# 12 scrapes with the scraper's token cost one TokenReview and one SubjectAccessReview.
reviews() {
  curl -k -sS --max-time 10 -H "Authorization: Bearer $scraper" "$url" |
    awk -v r="$1" '$1 ~ "^metrics_auth_reviews_total" && $1 ~ "review=\""r"\"" {s+=$NF} END {print s+0}'
}
tr_before=$(reviews TokenReview); sar_before=$(reviews SubjectAccessReview)
for _ in $(seq 12); do [ "$(code "$scraper")" = 200 ] || fail "scrape refused"; done
tr_after=$(reviews TokenReview); sar_after=$(reviews SubjectAccessReview)
[ "$tr_after" = "$tr_before" ] && [ "$sar_after" = "$sar_before" ] ||
  fail "cached decisions were reviewed again: TokenReviews $tr_before -> $tr_after, SARs $sar_before -> $sar_after"

# A flood of 200 distinct bad tokens, 40 at a time: only 401 or 429, and the operator stays
# ready and keeps reconciling.
seq 200 | xargs -P 40 -I{} curl -k -s -o /dev/null -w '%{http_code}\n' --max-time 20 \
  -H "Authorization: Bearer flood-{}-$RANDOM" "$url" >"$work/flood"
bad=$(grep -cv -E '^(401|429)$' "$work/flood" || true)
[ "$bad" = 0 ] || fail "flood: $bad answers other than 401/429: $(sort "$work/flood" | uniq -c | tr '\n' ' ')"
curl -fsS --max-time 2 "127.0.0.1:$OP_HEALTH_sec/readyz" >/dev/null || fail "not ready after the flood"
sample_app | kubectl apply -n "$ns" -f - >/dev/null
eventually 120 kubectl wait -n "$ns" appservice/nginx-app --for condition=Available --timeout=5s
kill -0 "$OP_PID_sec" || fail "the operator died"
flood=$(sort "$work/flood" | uniq -c | awk '{printf "%s %s, ", $1, $2}')
stop_operator "$OP_PID_sec" || fail "the operator did not exit 0 on SIGTERM"

# A certificate directory (cert-manager's layout), verified by the client, and rotated.
mkdir "$work/certs"
cert() {
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj "/CN=$1" \
    -addext "subjectAltName=IP:127.0.0.1" -keyout "$work/certs/tls.key.new" \
    -out "$work/certs/tls.crt.new" 2>/dev/null
  mv "$work/certs/tls.key.new" "$work/certs/tls.key"; mv "$work/certs/tls.crt.new" "$work/certs/tls.crt"
  cp "$work/certs/tls.crt" "$work/ca-$1.crt"
}
cert first
start_operator certs --namespace "$ns" --metrics-secure --metrics-cert-path "$work/certs"
url=https://127.0.0.1:$OP_METRICS_certs/metrics
verified() { curl -sS -o /dev/null --max-time 5 --cacert "$work/ca-$1.crt" -H "Authorization: Bearer $scraper" "$url"; }
verified first || fail "the certificate from --metrics-cert-path is not served"
cert second
eventually 30 verified second
verified first 2>/dev/null && fail "the old certificate is still served after the rotation"

rc=0
out=$("$ASOP_BINARY" --kubeconfig "$KUBECONFIG" --metrics-secure --metrics-cert-path "$work/none" 2>&1) || rc=$?
[ "$rc" = 2 ] || fail "an unreadable certificate directory: want exit 2, got $rc: $out"
[ "$(wc -l <<<"$out")" = 1 ] || fail "want one line, got: $out"
grep -q "$work/none/tls.crt" <<<"$out" || fail "the error does not name the file: $out"

echo "secure metrics: scrape cold ${cold}s (TokenReview + SubjectAccessReview), warm median ${warm_median}s;" \
  "12 scrapes with one token: $((tr_after - tr_before)) TokenReviews, $((sar_after - sar_before)) SARs" \
  "(at a 15 s interval: 1 TokenReview/min, 1 SAR per 5 min); flood of 200 bad tokens: ${flood%, }"
echo "PASS: secure metrics"
