// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <exception>
#include <string>

namespace ctrl {

// The one way the runtime turns an exception it caught as an exception_ptr (a coroutine's end)
// into text for a log line: what() of a std::exception, "unknown exception" for anything else,
// empty for no exception.
std::string exception_text(std::exception_ptr e);

}  // namespace ctrl
