// SPDX-License-Identifier: Apache-2.0
#include "appservice/cache_projection.h"

#include <vector>

#include "appservice/desired_state.h"
#include "ctrl/object/field_mask.h"
#include "ctrl/object/object_meta.h"

namespace appservice {
namespace {

// Every path here is read by the reconciler, child_match, conditions.cpp or the managed-fields
// upgrade. desired_state.cpp is the list of spec fields: a spec field it starts to send must be
// added here, or child_match sees drift forever (cache_projection_test checks that).
std::vector<ctrl::FieldMask::Path> child_paths(std::vector<ctrl::FieldMask::Path> spec_and_status) {
  std::vector<ctrl::FieldMask::Path> paths{
      {"apiVersion"},
      {"kind"},
      {"metadata", "name"},
      {"metadata", "namespace"},
      {"metadata", "uid"},
      {"metadata", "resourceVersion"},
      {"metadata", "generation"},
      {"metadata", "deletionTimestamp"},
      {"metadata", "finalizers"},
      {"metadata", "labels"},
      {"metadata", "ownerReferences"},
      {"metadata", "annotations", kSpecHashAnnotation},
      {"metadata", "managedFields", "manager"},
      {"metadata", "managedFields", "operation"},
      {"metadata", "managedFields", "subresource"},
  };
  paths.insert(paths.end(), spec_and_status.begin(), spec_and_status.end());
  return paths;
}

const ctrl::FieldMask& deployment_mask() {
  static const ctrl::FieldMask mask(child_paths({
      {"spec", "replicas"},
      {"spec", "selector"},
      {"spec", "template", "metadata", "labels"},
      {"spec", "template", "spec", "containers", "name"},
      {"spec", "template", "spec", "containers", "image"},
      {"spec", "template", "spec", "containers", "resources"},
      {"spec", "template", "spec", "containers", "env"},
      {"spec", "template", "spec", "containers", "ports"},
      {"status", "observedGeneration"},
      {"status", "replicas"},
      {"status", "updatedReplicas"},
      {"status", "readyReplicas"},
      {"status", "availableReplicas"},
      {"status", "conditions", "type"},
      {"status", "conditions", "status"},
      {"status", "conditions", "reason"},
      {"status", "conditions", "message"},
  }));
  return mask;
}

const ctrl::FieldMask& service_mask() {
  static const ctrl::FieldMask mask(child_paths({
      {"spec", "type"},
      {"spec", "selector"},
      {"spec", "ports"},
  }));
  return mask;
}

}  // namespace

void project_deployment(rapidjson::Value& object) {
  deployment_mask().apply(object);
}

void project_service(rapidjson::Value& object) {
  service_mask().apply(object);
}

void project_app_service(rapidjson::Value& object) {
  ctrl::strip_managed_fields(object);
  if (!object.IsObject()) return;
  auto meta = object.FindMember("metadata");
  if (meta == object.MemberEnd() || !meta->value.IsObject()) return;
  auto annotations = meta->value.FindMember("annotations");
  if (annotations == meta->value.MemberEnd() || !annotations->value.IsObject()) return;
  annotations->value.RemoveMember("kubectl.kubernetes.io/last-applied-configuration");
  if (annotations->value.ObjectEmpty()) meta->value.RemoveMember(annotations);
}

}  // namespace appservice
