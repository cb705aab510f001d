// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "asop/kind.h"
#include "kube/core/api_error.h"
#include "kube/core/url_query.h"

namespace kube {

// ResourcePath is public (asop/kind.h).
using asop::ResourcePath;

// path() plus "?query" when the query is not empty: the request target sent.
std::string request_target(const ResourcePath& path, const UrlQuery& query);

}  // namespace kube
