// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rapidjson/document.h>

#include <optional>
#include <string>
#include <string_view>

namespace ctrl {

// Where an object stands with a controller's finalizer, on (has it, being deleted): the four
// states of kube-rs' finalizer() and controller-runtime's controllerutil.
//   add       (no,  no)  add it before anything exists that needs cleaning up, and return: the
//                        update brings the key back
//   apply     (yes, no)  reconcile as usual
//   clean_up  (yes, yes) clean up (idempotently: it runs again after a crash), then remove it
//   nothing   (no,  yes) other finalizers are someone else's business
enum class FinalizerStep { add, apply, clean_up, nothing };
FinalizerStep finalizer_step(const rapidjson::Value& object, std::string_view finalizer);

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
