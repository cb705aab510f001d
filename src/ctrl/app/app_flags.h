// SPDX-License-Identifier: Apache-2.0
#pragma once

// Room src/ctrl/app/: the common main() of an operator: flags, the REST config from a kubeconfig or
// the pod, the client, metrics, the manager, exit codes. May use: src/asop/, src/ctrl/,
// src/ctrl/base/, src/ctrl/metrics/, src/ctrl/events/, src/ctrl/serve/, src/kube/api/,
// src/kube/config/, src/kube/http/, src/kube/core/ (the Rooms table in docs/architecture.md).

#include <chrono>
#include <string>

#include "asop/app.h"

namespace ctrl {

// The flags and their usage error are public (asop/app.h).
using asop::AppFlags;
using asop::UsageError;

// Parses --name=value, --name value, and -v N; booleans take no separate value. Throws UsageError.
AppFlags parse_app_flags(int argc, char** argv, std::string default_leader_election_id);
// Go duration subset: "15s", "500ms", "1m", "1m30s". Throws UsageError naming `flag`.
std::chrono::milliseconds parse_duration(const std::string& flag, const std::string& value);

}  // namespace ctrl
