// SPDX-License-Identifier: Apache-2.0
// asop::ControllerBuilder (the public builder) on the runtime's ctrl::ControllerBuilder.
#include "ctrl/public_builder.h"

#include <glog/logging.h>

#include <utility>

#include "asop/builder.h"
#include "ctrl/builder.h"

namespace asop {
namespace {

// The builder wires handlers and the write tracker into the runtime's informers: an informer made
// anywhere else (a test's own implementation of asop::Informer) cannot feed a controller.
ctrl::Informer& runtime_informer(Informer& informer, const char* call) {
  auto* runtime = dynamic_cast<ctrl::Informer*>(&informer);
  CHECK(runtime != nullptr) << "ControllerBuilder::" << call << ": informer " << informer.name()
                            << " does not come from App::informer()";
  return *runtime;
}

}  // namespace

ControllerBuilder::ControllerBuilder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ControllerBuilder::~ControllerBuilder() = default;
ControllerBuilder::ControllerBuilder(ControllerBuilder&&) noexcept = default;
ControllerBuilder& ControllerBuilder::operator=(ControllerBuilder&&) noexcept = default;

ControllerBuilder& ControllerBuilder::for_kind(const Kind& kind, Informer& primary,
                                               Updates updates) {
  impl_->builder.for_kind(kind, runtime_informer(primary, "for_kind"), updates);
  return *this;
}

ControllerBuilder& ControllerBuilder::owns(Informer& children) {
  impl_->builder.owns(runtime_informer(children, "owns"));
  return *this;
}

ControllerBuilder& ControllerBuilder::watches(Informer& informer, Mapper map) {
  impl_->builder.watches(runtime_informer(informer, "watches"), std::move(map));
  return *this;
}

void ControllerBuilder::complete(Reconciler& reconciler) {
  impl_->builder.complete(reconciler);
}

}  // namespace asop
