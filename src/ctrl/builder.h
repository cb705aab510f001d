// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ctrl/cache/informer.h"
#include "ctrl/controller.h"
#include "ctrl/kind.h"
#include "ctrl/manager.h"
#include "ctrl/reconciler.h"

namespace ctrl {

// A new controller in a few lines, the way controller-runtime's builder reads:
//
//   ctrl::ControllerBuilder(manager, options)
//       .for_kind(kAppService, apps)   // its changes queue the object's own key
//       .owns(deployments)             // a child's changes queue its controller owner
//       .watches(namespaces, map)      // anything else: `map` names the keys
//       .complete(reconciler);         // adds the controller to the manager
//
// The calls return the builder itself: chain them in one expression, as above (a reference to a
// temporary builder must not be kept past it), or call them on a named one. The informers come from
// Manager::informer() (the shared cache), so the reconciler reads the same stores the controller is
// fed from. complete() wires the handlers and returns the controller; the manager starts it once
// the caches synced (and the Lease is won, with leader election).
class ControllerBuilder {
 public:
  // Keys a change of a watched object concerns (controller-runtime's handler.MapFunc).
  using Mapper = std::function<std::vector<Request>(const StoreChange& change)>;

  ControllerBuilder(Manager& manager, Controller::Options options);

  // The primary kind, exactly one. With Options::resync_period, the keys of this store are queued
  // again every period. Updates::skip_status_only: a change of status alone queues nothing (for a
  // reconciler that writes the primary's status itself).
  ControllerBuilder& for_kind(const Kind& kind, Informer& primary,
                              Controller::Updates updates = Controller::Updates::all);
  // Children whose controller ownerReference names an object of the primary kind that is in the
  // primary's cache: their changes queue that owner (same namespace).
  ControllerBuilder& owns(Informer& children);
  // Any other informer: each change queues the keys `map` returns.
  ControllerBuilder& watches(Informer& informer, Mapper map);

  // Adds the controller with `reconciler` (which must outlive the manager's run()) and the
  // handlers above to the manager. CHECKs that for_kind() was called. Each reconcile gets a
  // ctrl::Client on the manager's REST client (ReconcileContext::client); read your own writes
  // is always on: the primary's and the owned and watched informers' caches are registered with
  // the controller's WriteTracker, so a key whose caches have not yet observed its last write
  // through the Client is held back and requeued.
  Controller& complete(Reconciler& reconciler);

 private:
  Manager& manager_;
  Controller::Options options_;
  Kind kind_;
  Informer* primary_ = nullptr;
  Controller::Updates updates_ = Controller::Updates::all;
  std::vector<Informer*> owned_;
  std::vector<std::pair<Informer*, Mapper>> watched_;
};

}  // namespace ctrl
