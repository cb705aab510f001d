// SPDX-License-Identifier: Apache-2.0
#include "ctrl/builder.h"

#include <glog/logging.h>

#include <utility>

#include "ctrl/handlers.h"

namespace ctrl {

ControllerBuilder::ControllerBuilder(Manager& manager, Controller::Options options)
    : manager_(manager), options_(std::move(options)) {}

ControllerBuilder& ControllerBuilder::for_kind(const Kind& kind, Informer& primary,
                                               Controller::Updates updates) {
  CHECK(primary_ == nullptr) << "controller " << options_.name << ": for_kind() twice";
  kind_ = kind;
  primary_ = &primary;
  updates_ = updates;
  return *this;
}

ControllerBuilder& ControllerBuilder::owns(Informer& children) {
  owned_.push_back(&children);
  return *this;
}

ControllerBuilder& ControllerBuilder::watches(Informer& informer, Mapper map) {
  watched_.emplace_back(&informer, std::move(map));
  return *this;
}

Controller& ControllerBuilder::complete(Reconciler& reconciler) {
  CHECK(primary_ != nullptr) << "controller " << options_.name << ": complete() before for_kind()";
  if (options_.resync_period.count() > 0 && options_.resync_store == nullptr) {
    options_.resync_store = &primary_->store();
  }
  if (!options_.client) options_.client = manager_.client();
  Controller& controller = manager_.add_controller(options_, reconciler);
  // Before the controller's own handlers: a deletion drops its records first.
  WriteTracker& tracker = controller.write_tracker();
  tracker.add_informer(*primary_);
  for (Informer* children : owned_) tracker.add_informer(*children);
  for (auto& [informer, map] : watched_) tracker.add_informer(*informer);
  primary_->add_handler(controller.enqueue_self(updates_));
  for (Informer* children : owned_) {
    children->add_handler(
        controller.enqueue_controller_owner(kind_.group(), kind_.kind, &primary_->store()));
  }
  for (auto& [informer, map] : watched_) {
    informer->add_handler(handlers::enqueue(controller.queue(), std::move(map)));
  }
  return controller;
}

}  // namespace ctrl
