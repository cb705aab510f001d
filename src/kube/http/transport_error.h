// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <boost/system/error_code.hpp>
#include <string_view>

#include "kube/core/api_error.h"

namespace kube {

// An ApiError for a failed network operation. Beast's deadline expiry (beast::error::timeout) is
// always Errc::timeout; everything else is classified by api_error_from_transport.
ApiError transport_error(const boost::system::error_code& ec, std::string_view what);

}  // namespace kube
