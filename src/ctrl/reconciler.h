// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "asop/reconciler.h"
#include "kube/core/api_error.h"

namespace ctrl {

// The reconciler's vocabulary is public (asop/reconciler.h).
using asop::Client;
using asop::ObjectKey;
using asop::ReconcileContext;
using asop::Reconciler;
using asop::ReconcileResult;
using asop::Request;

}  // namespace ctrl
