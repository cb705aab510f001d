// SPDX-License-Identifier: Apache-2.0
#pragma once

// Public API (docs/library.md): the controller owner reference of a child
// (controllerutil.SetControllerReference).

#include <rapidjson/document.h>

#include "asop/kind.h"
#include "asop/object.h"

namespace asop {

// controller-runtime's controllerutil.SetControllerReference on an object (or an apply body):
// metadata.ownerReferences gets `owner` (its apiVersion, kind, name and uid) with controller and
// blockOwnerDeletion true, replacing a reference to the same owner (same kind, group and name) and
// keeping every other one; metadata is made if missing. The garbage collector then deletes the
// object with its owner, and the owner's controller is queued by the object's changes.
// Returns false and changes nothing when the object already has another controller: an object
// has at most one, and taking it over is not this function's decision.
bool set_controller_reference(rapidjson::Value& object, const OwnerRef& owner,
                              rapidjson::Document::AllocatorType& a);

// The OwnerRef naming `owner`, an object of `kind` (list items carry no kind): its name and uid.
OwnerRef owner_of(const Kind& kind, const rapidjson::Value& owner);

}  // namespace asop
