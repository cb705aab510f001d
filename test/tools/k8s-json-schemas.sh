#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Writes the JSON schemas kubeconform validates against, offline, with jq only:
#   test/tools/k8s-json-schemas.sh OUT-DIR SWAGGER.json [CRD.yaml ...]
# SWAGGER.json is a Kubernetes OpenAPI v2 spec (api/openapi-spec/swagger.json of the k8s.io/kubernetes
# module); each CRD file may hold several documents. One file per kind and version, laid out for
# kubeconform's -schema-location 'OUT-DIR/{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json'
# (the core group's folder is "v1", its Group as kubeconform splits the apiVersion). The schemas are
# strict, as kubernetes-json-schema's *-strict ones: an object schema that lists its properties gets
# additionalProperties false (unless it already says, or keeps unknown fields), so a misspelled or
# misplaced field is an error. A built-in kind's file holds the definitions it reaches (refs kept,
# so recursive ones such as JSONSchemaProps work); IntOrString and Quantity take a number or a string
# as the API server does.
set -euo pipefail
out=${1:?usage: k8s-json-schemas.sh OUT-DIR SWAGGER.json [CRD.yaml ...]}
swagger=${2:?usage: k8s-json-schemas.sh OUT-DIR SWAGGER.json [CRD.yaml ...]}
shift 2
mkdir -p "$out"

# strict: additionalProperties false on every object schema that lists properties, through
# properties, items and additionalProperties (not into allOf/anyOf/oneOf/not: there a branch lists
# only the fields it constrains).
strict='def strict:
  if type != "object" then .
  else (if (.properties | type) == "object" then .properties |= map_values(strict) else . end)
    | (if (.items | type) == "object" then .items |= strict else . end)
    | (if (.additionalProperties | type) == "object" then .additionalProperties |= strict else . end)
    | (if (.properties | type) == "object" and (has("additionalProperties") | not)
         and (.["x-kubernetes-preserve-unknown-fields"] != true)
       then .additionalProperties = false else . end)
  end;'

# write: reads lines "PATH<TAB>JSON" and writes each JSON to OUT-DIR/PATH.
write() {
  local path json n=0
  while IFS=$'\t' read -r path json; do
    mkdir -p "$out/$(dirname "$path")"
    printf '%s\n' "$json" >"$out/$path"
    n=$((n + 1))
  done
  echo "$n"
}

built_in=$(jq -r "$strict"'
  .definitions
  | .["io.k8s.apimachinery.pkg.util.intstr.IntOrString"] = {oneOf: [{type: "string"}, {type: "integer"}]}
  | .["io.k8s.apimachinery.pkg.api.resource.Quantity"] = {oneOf: [{type: "string"}, {type: "number"}]}
  | map_values(strict) as $defs
  # each definition: the names its refs point at
  | ($defs | map_values([.. | objects | .["$ref"]? | strings | ltrimstr("#/definitions/")] | unique)) as $refs
  | def closure: . as $set | ($set + ([$set[] | $refs[.][]]) | unique) as $next
      | if $next == $set then $set else $next | closure end;
  $defs | to_entries[] | .key as $name | .value as $schema
  | (.value["x-kubernetes-group-version-kind"] // [])[]
  | "\(if .group == "" then .version else .group end)/\(.kind | ascii_downcase)_\(.version).json\t\(
      $schema + {definitions: ([$name] | closure | map({key: ., value: $defs[.]}) | from_entries)} | tojson)"
' "$swagger" | write)

crds=0
if [ $# -gt 0 ]; then
  crds=$(yq -c 'select(.kind == "CustomResourceDefinition")' "$@" | jq -r "$strict"'
    .spec as $spec | $spec.versions[] | select(.schema.openAPIV3Schema != null)
    | "\($spec.group)/\($spec.names.kind | ascii_downcase)_\(.name).json\t\(.schema.openAPIV3Schema | strict | tojson)"
  ' | write)
fi
echo "k8s-json-schemas.sh: $built_in built-in and $crds custom kind schemas in $out" >&2
