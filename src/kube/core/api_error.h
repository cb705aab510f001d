// SPDX-License-Identifier: Apache-2.0
#pragma once

// Room src/kube/core/: the vocabulary of every client room: error kinds (Errc, a std::error_code
// category) and Status parsing, Result, resource paths, query strings, null-safe JSON readers. May
// use: src/asop/ (the Rooms table in docs/architecture.md).

#include <rapidjson/fwd.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "asop/errors.h"

namespace kube {

// The public vocabulary (asop/errors.h) under the names this layer has always used.
using asop::api_category;
using asop::ApiError;
using asop::default_reason;
using asop::Errc;
using asop::make_error_code;
using asop::StatusCause;

// Bounds keep a hostile or broken server (a proxy's HTML page, a huge Status) out of logs and
// Events: everything an ApiError holds is at most this long.
inline constexpr std::size_t kMaxErrorMessageBytes = 4096;  // Status.message as the server sent it
inline constexpr std::size_t kMaxBodyExcerptBytes = 256;    // a non-Status body
inline constexpr std::size_t kMaxDescribeBytes = 2048;      // ApiError::describe()
inline constexpr std::size_t kMaxStatusCauses = 64;

// The kind for an HTTP status code, refined by Status.reason when the body has one. As in
// client-go, a known reason wins over the code (409 + AlreadyExists is already_exists); an unknown
// or empty reason falls back to the code.
Errc errc_from_status(int http_status, std::string_view reason = {});

// Builds the error for a non-2xx response; `body` is usually a metav1.Status in JSON but may be
// anything (HTML from a proxy, empty, truncated). `retry_after` is the raw Retry-After header
// (delay in seconds), if any; it wins over Status.details.retryAfterSeconds. Never throws on bad
// input.
ApiError api_error_from_response(int http_status, std::string_view body,
                                 std::string_view retry_after = {});

// Builds the error from a decoded metav1.Status value, e.g. the object of a watch ERROR event.
// The kind comes from Status.code (or `http_status` when the Status has no code) and Status.reason,
// so an ERROR event with code 410 is Errc::gone exactly like an HTTP 410.
ApiError api_error_from_status(const rapidjson::Value& status, int http_status = 0);

// A transport failure (no response, or a broken one); classified as Errc::timeout (Asio timed_out,
// Beast timeout) or Errc::unavailable (everything else) so callers need not know Asio or OpenSSL
// codes. Message: `what + ": " + ec.message()`.
ApiError api_error_from_transport(std::error_code ec, std::string_view what);

// Text made safe for one log line: control characters and whitespace runs become one space,
// invalid UTF-8 becomes '?', and the result is cut at a character boundary to at most `max_bytes`
// (ending in "..." when cut).
std::string one_line_excerpt(std::string_view text, std::size_t max_bytes);

}  // namespace kube
