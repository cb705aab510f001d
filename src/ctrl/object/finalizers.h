// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rapidjson/document.h>

#include <optional>
#include <string>
#include <string_view>

#include "asop/finalizers.h"

namespace ctrl {

// The finalizer's states are public (asop/finalizers.h).
using asop::finalizer_step;
using asop::FinalizerStep;

// A JSON patch that adds `finalizer`, guarded by the object's resourceVersion so a concurrent
// writer's finalizer list is never overwritten; nullopt when the object has it.
std::optional<std::string> add_finalizer_patch(const rapidjson::Value& object,
                                               std::string_view finalizer);
// A JSON patch that removes `finalizer` only if it is still where the object shows it (a "test"
// op on that entry): another writer's finalizer is never dropped; nullopt when the object does
// not have it.
std::optional<std::string> remove_finalizer_patch(const rapidjson::Value& object,
                                                  std::string_view finalizer);

}  // namespace ctrl
