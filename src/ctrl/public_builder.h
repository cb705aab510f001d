// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "asop/builder.h"
#include "ctrl/builder.h"

namespace asop {

// What the public builder drives: the runtime's own.
struct ControllerBuilder::Impl {
  explicit Impl(ctrl::ControllerBuilder b) : builder(std::move(b)) {}
  ctrl::ControllerBuilder builder;
};

}  // namespace asop
