// SPDX-License-Identifier: Apache-2.0
#pragma once

// Room src/kube/core/: the vocabulary of every client room: error kinds (Errc, a std::error_code
// category) and Status parsing, Result, resource paths, query strings, null-safe JSON readers. May
// use: nothing else in src/ (the Rooms table in docs/architecture.md).

#include <rapidjson/fwd.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace kube {

// Kubernetes failure kinds, as client-go's apierrors.Is* functions tell them apart. Registered as a
// std::error_code category (name "kube") so callers compare codes, never message text.
enum class Errc {
  not_found = 1,
  already_exists,
  conflict,
  gone,  // 410 / reason Expired or Gone: a resourceVersion or continue token is too old
  too_many_requests,
  forbidden,
  unauthorized,
  invalid,  // 422 with field causes
  bad_request,
  method_not_allowed,
  unsupported_media_type,
  request_entity_too_large,
  timeout,      // 504, or reason Timeout / ServerTimeout, or a transport timeout
  unavailable,  // 503/502, connection refused, TLS or socket failures talking to the server
  internal,     // 500 and other 5xx
  unknown,      // a status or reason none of the above explains
  // Client side: a response body over the transport's cap (HttpTransport::Options), refused before
  // it could exhaust the pod's memory. Retrying the same request gets the same answer.
  response_too_large,
};

const std::error_category& api_category();
std::error_code make_error_code(Errc e);

// The metav1.StatusReason client-go uses for a kind when the server sent none ("NotFound", ...);
// empty for Errc::unknown.
std::string_view default_reason(Errc e);

// One entry of Status.details.causes.
struct StatusCause {
  std::string type;  // Status.details.causes[].reason, e.g. "FieldValueInvalid"
  std::string message;
  std::string field;  // e.g. "spec.replicas"
};

// Bounds keep a hostile or broken server (a proxy's HTML page, a huge Status) out of logs and
// Events: everything an ApiError holds is at most this long.
inline constexpr std::size_t kMaxErrorMessageBytes = 4096;  // Status.message as the server sent it
inline constexpr std::size_t kMaxBodyExcerptBytes = 256;    // a non-Status body
inline constexpr std::size_t kMaxDescribeBytes = 2048;      // ApiError::describe()
inline constexpr std::size_t kMaxStatusCauses = 64;

// A failed request: the kind, and what the server said, kept for logs and Events.
struct ApiError {
  std::error_code code;
  int http_status = 0;  // 0 when no response arrived; Status.code for a watch ERROR event
  std::string reason;   // Status.reason, e.g. "AlreadyExists"; the default for the kind otherwise
  std::string message;  // Status.message, a body excerpt, or the transport error's text
  std::vector<StatusCause> causes;
  std::optional<std::chrono::seconds> retry_after;  // Retry-After or details.retryAfterSeconds

  bool is(Errc e) const { return code == make_error_code(e); }
  // One line, at most kMaxDescribeBytes: `AlreadyExists (409): deployments.apps "x" already
  // exists`, plus ` [field: message; ...]` for causes. For logs and Events.
  std::string describe() const;
};

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

template <>
struct std::is_error_code_enum<kube::Errc> : std::true_type {};
