// SPDX-License-Identifier: Apache-2.0
// configmap-sync: copies every ConfigMap labelled configmap-sync.example.com/source=true into each
// namespace labelled configmap-sync.example.com/sync=true, and keeps the copies equal to it.
// Built only from the installed AsopRuntime package (docs/library.md).
#include <string>

#include "asop/app.h"
#include "configmap_sync_controller.h"

namespace {

constexpr const char* kUsage = R"(usage: configmap-sync [flags]

Copies each ConfigMap labelled configmap-sync.example.com/source=true into every namespace labelled
configmap-sync.example.com/sync=true, puts back copies that are edited or deleted, and removes
the copies when the source goes.

Flags: the runtime's (docs/library.md): --kubeconfig, --context, --leader-elect,
--metrics-bind-address, --health-probe-bind-address, --max-concurrent-reconciles, -v, ...
)";

}  // namespace

int main(int argc, char** argv) {
  asop::App app({"configmap-sync", CONFIGMAP_SYNC_VERSION, kUsage, "configmap-sync.example.com"});
  if (auto exit_code = app.init(argc, argv)) return *exit_code;
  auto reconciler = configmap_sync::add_controller(app);
  return app.run();
}
