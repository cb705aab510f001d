// SPDX-License-Identifier: Apache-2.0
#pragma once

// Public API (docs/library.md): the four states of a controller's finalizer. The Client
// adds and removes one with guarded patches (Client::add_finalizer, Client::remove_finalizer).

#include <rapidjson/document.h>

#include <string_view>

namespace asop {

// Where an object stands with a controller's finalizer, on (has it, being deleted): the four
// states of kube-rs' finalizer() and controller-runtime's controllerutil.
//   add       (no,  no)  add it before anything exists that needs cleaning up, and return: the
//                        update brings the key back
//   apply     (yes, no)  reconcile as usual
//   clean_up  (yes, yes) clean up (idempotently: it runs again after a crash), then remove it
//   nothing   (no,  yes) other finalizers are someone else's business
enum class FinalizerStep { add, apply, clean_up, nothing };
FinalizerStep finalizer_step(const rapidjson::Value& object, std::string_view finalizer);

}  // namespace asop
