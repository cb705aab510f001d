# SPDX-License-Identifier: Apache-2.0
# wait_established NAME: waits up to 60 s for crd/NAME to be Established. `kubectl wait` alone is
# not enough: a CRD created a moment ago is served with "conditions": null, on which kubectl wait
# fails at once (".status.conditions accessor error: <nil> is of the type <nil>") instead of
# waiting, so it is retried until the deadline.
wait_established() {
  local deadline=$(( $(date +%s) + 60 ))
  until kubectl wait --for condition=Established "crd/$1" --timeout=10s >/dev/null 2>&1; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      kubectl wait --for condition=Established "crd/$1" --timeout=1s >&2
      return 1
    fi
    sleep 0.5
  done
}
