#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# etcd compaction with the watch cache off: an own control plane runs kube-apiserver with
# --watch-cache=false, so a watch goes to etcd itself. The operator talks through
# test/tools/blackhole_proxy, which cuts its connections; while it is cut off, AppServices and
# children are deleted and changed, and etcd is compacted past every revision the operator saw.
# When the proxy lets traffic through again, each re-watch gets 410 and the informers relist. The
# relist must drop what was deleted meanwhile, which shows in behaviour:
#   - gone1, deleted without our finalizer, is not acted on: its children (removed by the garbage
#     collector) are not recreated, and the operator comes to rest;
#   - child1's Deployment, deleted meanwhile, is recreated (a stale cache would think it exists);
#   - edit1, changed meanwhile, and new1, created meanwhile, converge.
# ctest: processors 2
# ctest: asan
source "$(dirname "$0")/lib.sh"
APISERVER_EXTRA_ARGS=--watch-cache=false own_controlplane
start_proxy
# -v 4 logs each request: the relist is a streaming list from etcd (a watch with
# sendInitialEvents=true and no resourceVersion), not a list. Paged lists from etcd, the fallback,
# are proven in watch_list_off_test.sh.
start_operator main -v 4
pid=$OP_PID_main
log=$OP_LOG_DIR/main.log
for a in keep1 gone1 child1 edit1; do app $a 1 nginx:1.27; done
for a in keep1 gone1 child1 edit1; do eventually 60 converged $a nginx:1.27; done

proxy cut >/dev/null
lines_before=$(wc -l < "$log")
# gone1 disappears at once: its finalizer is taken off first, so the operator has no say.
k patch appservice gone1 --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null
k delete appservice gone1 >/dev/null
eventually 60 sh -c "! kubectl -n $ns get deployment gone1 && ! kubectl -n $ns get service gone1"
k delete deployment child1 >/dev/null
app edit1 1 nginx:1.28
app new1 1 nginx:1.27

# Compact etcd up to its current revision: every resourceVersion the operator holds is gone.
etcd=$(cat "$cp_dir/etcd-url")
range=$(curl -fsS -X POST -d '{"key":"AA=="}' "$etcd/v3/kv/range")
revision=$(sed -E 's/.*"revision":"([0-9]+)".*/\1/' <<<"$range")
[[ $revision =~ ^[0-9]+$ ]] || fail "no etcd revision in: $range"
curl -fsS -X POST -d "{\"revision\":$revision,\"physical\":true}" "$etcd/v3/kv/compaction" >/dev/null
proxy flow >/dev/null
flow_ms=$(now_ms)

for a in keep1:nginx:1.27 child1:nginx:1.27 edit1:nginx:1.28 new1:nginx:1.27; do
  eventually 120 converged "${a%%:*}" "${a#*:}"
done
recover_ms=$(( $(now_ms) - flow_ms ))
after=$(tail -n +"$(( lines_before + 1 ))" "$log")
relists=$(grep -c 'relisted objects=' <<<"$after" || true)
[ "$relists" -ge 1 ] || fail "no informer relisted after the compaction: $after"
grep -qE 'informer="app.example.com/v1 appservices" relisted objects=4 relists=[0-9]+ via=watch-list' <<<"$after" ||
  fail "the AppService cache does not hold exactly the 4 AppServices left, streamed: $(grep relisted <<<"$after")"
# The relist streamed a consistent snapshot (no resourceVersion: the old one is compacted away).
streams=$(grep -cE 'GET /apis/app\.example\.com/v1/appservices\?watch=1&timeoutSeconds=[0-9]+&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan on [^ ]* -> 200' <<<"$after" || true)
lists=$(grep -E 'GET /apis/app\.example\.com/v1/appservices\?[^ ]* -> ' <<<"$after" | grep -cv 'watch=1' || true)
echo "AppService requests after the compaction: $streams streaming lists, $lists lists"
[ "$streams" -ge 1 ] || fail "the AppService relist was not a streaming list from the latest state"
[ "$lists" = 0 ] || fail "$lists AppService list requests after the compaction"
# At rest, gone1 has no children: a stale cache entry would have the operator recreate them (and
# the garbage collector delete them again) in a loop. (Until every informer relisted, one
# recreation may slip through; the garbage collector removes it and the operator must then rest.)
eventually 60 sh -c "! kubectl -n $ns get deployment gone1 && ! kubectl -n $ns get service gone1"
writes_settled "$OP_METRICS_main"
k get deployment gone1 >/dev/null 2>&1 && fail "gone1's Deployment was recreated"
k get service gone1 >/dev/null 2>&1 && fail "gone1's Service was recreated"
running "$pid" || fail "operator crashed"
leaked=$(leaks)
[ "$leaked" = 0 ] || fail "$leaked leaked children"
[ "$(stuck_finalizers)" = 0 ] || fail "finalizer stuck"
gone_410=$(grep -c -i 'expired\|too old\|410' <<<"$after" || true)
requests=$(metric "$OP_METRICS_main" rest_client_requests_total)
errors=$(metric "$OP_METRICS_main" controller_runtime_reconcile_errors_total)
echo "figures: recover=$(secs "$recover_ms") (after the proxy let traffic through) requests=$requests errors=$errors leaks=$leaked relists=$relists gone_410_lines=$gone_410"
echo "PASS: compaction"
