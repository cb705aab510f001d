// SPDX-License-Identifier: Apache-2.0
#pragma once

// Public API (docs/library.md): a controller in a few lines, the way controller-runtime's builder
// reads, from App::controller():
//
//   app.controller("thing")
//       .for_kind(kThing, things)     // its changes queue the object's own key
//       .owns(deployments)            // a child's changes queue its controller owner
//       .watches(namespaces, map)     // anything else: `map` names the keys
//       .complete(reconciler);        // adds the controller to the app
//
// The informers come from App::informer() (the shared cache), so the reconciler reads the same
// caches the controller is fed from.

#include <functional>
#include <memory>
#include <vector>

#include "asop/cache.h"
#include "asop/kind.h"
#include "asop/object.h"
#include "asop/reconciler.h"

namespace asop {

// Which changes of the primary kind queue its key.
enum class Updates {
  all,
  // A change of status alone queues nothing: for a reconciler that writes the primary's status
  // itself (its own status write would otherwise bring the key straight back).
  skip_status_only,
};

class ControllerBuilder {
 public:
  // Keys a change of a watched object concerns (controller-runtime's handler.MapFunc).
  using Mapper = std::function<std::vector<Request>(const StoreChange& change)>;

  struct Impl;
  explicit ControllerBuilder(std::unique_ptr<Impl> impl);
  ~ControllerBuilder();
  ControllerBuilder(ControllerBuilder&&) noexcept;
  ControllerBuilder& operator=(ControllerBuilder&&) noexcept;

  // The primary kind, exactly one. With --sync-period, its keys are queued again every period.
  ControllerBuilder& for_kind(const Kind& kind, Informer& primary, Updates updates = Updates::all);
  // Children whose controller ownerReference names an object of the primary kind that is in the
  // primary's cache: their changes queue that owner (same namespace).
  ControllerBuilder& owns(Informer& children);
  // Any other informer: each change queues the keys `map` returns.
  ControllerBuilder& watches(Informer& informer, Mapper map);

  // Adds the controller with `reconciler` (which must outlive App::run()). Each reconcile gets a
  // Client (ReconcileContext::client) whose writes are read back before the key runs again: a key
  // whose caches have not yet seen its last write is held and requeued. The informers must be
  // App::informer()'s.
  void complete(Reconciler& reconciler);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace asop
