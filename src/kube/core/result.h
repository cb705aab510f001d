// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <utility>
#include <variant>

#include "kube/core/api_error.h"

namespace kube {

// Result and Ok are public (asop/errors.h).
template <class T>
using Result = asop::Result<T>;
using asop::Ok;
using asop::result_misuse;

}  // namespace kube
