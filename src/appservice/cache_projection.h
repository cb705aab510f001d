// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rapidjson/document.h>

namespace appservice {

// Informer transforms: cut each cached object down to the fields this operator reads, before it is
// cached. A Deployment as the API server sends it is mostly server defaults, managedFields and
// status this operator never looks at; the cache holds one per AppService for as long as it lives.
//
// Kept of a child: identity and preconditions (name, namespace, uid, resourceVersion, generation,
// deletionTimestamp), labels, ownerReferences, our spec-hash annotation, who wrote it (manager,
// operation, subresource of each managedFields entry), every spec field the desired apply body can
// hold (child_match compares those), and for a Deployment the status fields conditions.cpp reads.
void project_deployment(rapidjson::Value& object);
void project_service(rapidjson::Value& object);

// An AppService is read whole, except its managedFields and the copy of itself that
// `kubectl apply` keeps in an annotation.
void project_app_service(rapidjson::Value& object);

}  // namespace appservice
