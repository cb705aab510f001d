// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>

#include "asop/app.h"
#include "configmap_sync_reconciler.h"

namespace configmap_sync {

// The caches and the controller of configmap-sync on `app`, as main() runs them and the tests
// (configmap_sync_test.cpp) run them on an asop::testing::TestApp. The reconciler must outlive
// the app's run.
std::unique_ptr<ConfigMapSyncReconciler> add_controller(asop::App& app);

}  // namespace configmap_sync
