// SPDX-License-Identifier: Apache-2.0
// asop::App (the public App) on the runtime's ctrl::App.
#include <glog/logging.h>

#include <memory>
#include <utility>

#include "asop/app.h"
#include "ctrl/app/app.h"
#include "ctrl/app/public_app_impl.h"
#include "ctrl/public_builder.h"

namespace asop {

App::App(Options options) : impl_(std::make_unique<Impl>(std::move(options))) {}
App::~App() = default;

std::optional<int> App::init(int argc, char** argv) {
  auto exit_code = impl_->app.init(argc, argv);
  impl_->initialized = !exit_code;
  return exit_code;
}

const AppFlags& App::flags() const {
  return impl_->app.flags();
}

Informer& App::informer(const Kind& kind, const std::string& label_selector) {
  CHECK(impl_->initialized) << "App::informer() before App::init()";
  return impl_->app.manager().informer(kind, label_selector);
}

EventRecorder& App::events() {
  return impl_->app.events();
}

ControllerBuilder App::controller(std::string name) {
  CHECK(impl_->initialized) << "App::controller() before App::init()";
  return ControllerBuilder(
      std::make_unique<ControllerBuilder::Impl>(impl_->app.controller(std::move(name))));
}

int App::run() {
  return impl_->app.run();
}

}  // namespace asop
