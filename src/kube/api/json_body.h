// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "asop/client.h"

namespace kube {

// Public (asop/client.h).
using asop::JsonBody;

}  // namespace kube
