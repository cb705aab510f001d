#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# An API server that does not serve streaming lists: kube-apiserver with
# --feature-gates=WatchList=false (the default of 1.33; such a server answers a watch with
# sendInitialEvents=true with 422 Invalid) and the watch cache off, so a list reads etcd and pages.
# Every informer must fall back to a paginated list, at once and without a retry loop; the
# operator must converge AppServices that existed before it started, and its watches must then
# carry changes as usual. (The streaming path is what every other e2e test runs.)
# ctest: processors 2
source "$(dirname "$0")/lib.sh"
APISERVER_EXTRA_ARGS="--feature-gates=WatchList=false --watch-cache=false" own_controlplane
for a in a1 a2 a3; do app $a 1 nginx:1.27; done
# -v 4 logs each request; pages of 2 make the AppService list take two.
start_operator main --list-page-size 2 -v 4
pid=$OP_PID_main
log=$OP_LOG_DIR/main.log
for a in a1 a2 a3; do eventually 90 converged $a nginx:1.27; done

# Each of the three informers asked to stream, was refused by the server, and listed instead.
refused=$(grep -cE 'watch=1[^ ]*sendInitialEvents=true[^ ]* on [^ ]* -> 422' "$log" || true)
[ "$refused" -eq 3 ] || fail "want 3 streaming lists refused with 422, got $refused: $(grep sendInitialEvents "$log")"
fallbacks=$(grep -c 'streaming list not served' "$log" || true)
[ "$fallbacks" -eq 3 ] || fail "want 3 fallbacks to a list, got $fallbacks"
for informer in 'app.example.com/v1 appservices' 'apps/v1 deployments' 'v1 services'; do
  grep -q "informer=\"$informer\" synced objects=[0-9]* lists=1 via=list" "$log" ||
    fail "informer $informer did not sync by a list: $(grep synced "$log")"
done
continued=$(grep -cE 'GET /apis/app\.example\.com/v1/appservices\?[^ ]*continue=[^ ]* -> 200' "$log" || true)
[ "$continued" -ge 1 ] || fail "--list-page-size 2 did not page the AppService list"
# No backoff between the refusal and the list: the fallback is part of the same relist.
grep -q 'retrying in' "$log" && fail "an informer backed off: $(grep 'retrying in' "$log")"

# The watches opened after the lists carry changes.
app a2 1 nginx:1.28
app b1 1 nginx:1.27
eventually 60 converged a2 nginx:1.28
eventually 60 converged b1 nginx:1.27
running "$pid" || fail "operator crashed"
echo "figures: refused=$refused fallbacks=$fallbacks continued_pages=$continued"
echo "PASS: watch_list_off"
