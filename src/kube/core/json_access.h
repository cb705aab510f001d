// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "asop/object.h"

// The readers are public (asop/object.h).
namespace kube {
namespace json = ::asop::json;
}  // namespace kube
