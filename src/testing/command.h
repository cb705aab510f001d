// SPDX-License-Identifier: Apache-2.0
#pragma once

// Room src/testing/: the test kit behind src/asop/testing/ (docs/testing.md): the shared control
// plane and its file locks, test namespaces, the blocking test client, the App on a test clock.
// May use: src/asop/, src/asop/testing/, src/ctrl/, src/ctrl/app/, src/ctrl/base/,
// src/ctrl/queue/, src/kube/api/, src/kube/config/, src/kube/http/, src/kube/core/ (the Rooms
// table in docs/architecture.md).

#include <string>
#include <string_view>

#include "asop/testing/control_plane.h"

namespace asop::testing {

// Runs `command` with /bin/sh; `input`, when given, on its stdin.
CommandResult run_command(const std::string& command, std::string_view input = {});

// `text` quoted for /bin/sh.
std::string shell_quote(std::string_view text);

}  // namespace asop::testing
