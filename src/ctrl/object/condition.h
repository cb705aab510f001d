// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "asop/conditions.h"

namespace ctrl {

// Conditions are public (asop/conditions.h).
using asop::Condition;
using asop::condition_to_json;
using asop::conditions_from_json;
using asop::find_status_condition;
using asop::set_status_condition;
using asop::transitioned;

}  // namespace ctrl
