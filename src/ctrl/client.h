// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "asop/client.h"
#include "ctrl/reconciler.h"
#include "ctrl/write_tracker.h"
#include "kube/api/rest_client.h"

namespace asop {

// What a Client is bound to: the REST client (with the reconcile's deadline, if any), the
// controller's WriteTracker, and the reconcile's key and log anchors.
struct Client::Impl {
  Impl(kube::RestClient rest_, ctrl::WriteTracker& tracker_, ObjectKey key_,
       std::string log_prefix_);

  // The REST client that logs each write at -v=1 with `why`.
  kube::RestClient writer(std::string why) const;
  // Records a successful write's answer; the result passes through.
  Response recorded(const ResourcePath& object, Response result);

  kube::RestClient rest;
  ctrl::WriteTracker& tracker;
  ObjectKey key;
  std::string owner_key;
  std::string log_prefix;
};

}  // namespace asop

namespace ctrl {

// The reconciler's door (public: asop/client.h), made by the controller for each reconcile.
using asop::Client;
Client make_client(kube::RestClient rest, WriteTracker& tracker, asop::ObjectKey key,
                   std::string log_prefix);

}  // namespace ctrl
