// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <utility>

#include "asop/kind.h"

namespace ctrl {

// Kind is public (asop/kind.h).
using asop::Kind;

}  // namespace ctrl
