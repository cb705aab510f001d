// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <utility>

#include "asop/app.h"
#include "ctrl/app/app.h"

namespace asop {

// What an asop::App is: the runtime's App (public_app.cpp; the test kit reaches it as a friend).
struct App::Impl {
  explicit Impl(Options options) : app(std::move(options)) {}
  ctrl::App app;
  bool initialized = false;  // init() made the manager
};

}  // namespace asop
