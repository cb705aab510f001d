// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "asop/owner.h"
#include "ctrl/object/object_meta.h"

namespace ctrl {

// Public (asop/owner.h).
using asop::set_controller_reference;

}  // namespace ctrl
