#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `kubectl explain appservice...` has something to say for every field: each property of the CRD's
# schema, at any depth, carries a description (list items and map values are described by their
# property; the root's metadata may hold nothing but its type, and kubectl explain shows
# ObjectMeta's own text for it). The e2e crd_validation_test shows one through the API server.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
schema=$(yq -c '.spec.versions[0].schema.openAPIV3Schema' "$root/crds/app.example.com_appservices.yaml")
# Every property path (through items and additionalProperties) and whether it has a description.
rows=$(jq -r '
  def props($p): (.properties // {} | to_entries[] |
      ([$p + "." + .key, ((.value.description // "") | length > 0)] | @tsv),
      (.value | props($p + "." + .key))),
    (.items // empty | props($p + "[]")),
    (.additionalProperties | objects | props($p + "{}"));
  props("")' <<<"$schema")
total=$(grep -c . <<<"$rows")
[ "$total" -ge 45 ] || fail "only $total properties found: the walk is broken"
missing=$(awk -F'\t' '$2 == "false" && $1 != ".metadata" {print $1}' <<<"$rows")
[ -z "$missing" ] || fail "properties without a description (kubectl explain prints nothing for them):
$missing"
echo "all $total properties of the AppService schema have a description"
