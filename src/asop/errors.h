// SPDX-License-Identifier: Apache-2.0
#pragma once

// Room src/asop/: the public API, the headers installed. May use: nothing else in src/.
//
// How a request fails. Errc kinds as client-go's apierrors.Is*
// tell them apart, the ApiError a failed request carries, and Result, a value or that error.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <variant>
#include <vector>

namespace asop {

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
  // Client side: a response body over the transport's cap (the transport's limit), refused before
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

// A failed request: the kind, and what the server said, kept for logs and Events.
struct ApiError {
  std::error_code code;
  int http_status = 0;  // 0 when no response arrived; Status.code for a watch ERROR event
  std::string reason;   // Status.reason, e.g. "AlreadyExists"; the default for the kind otherwise
  std::string message;  // Status.message, a body excerpt, or the transport error's text
  std::vector<StatusCause> causes;
  std::optional<std::chrono::seconds> retry_after;  // Retry-After or details.retryAfterSeconds

  bool is(Errc e) const { return code == make_error_code(e); }
  // One line, at most 2,048 bytes: `AlreadyExists (409): deployments.apps "x" already
  // exists`, plus ` [field: message; ...]` for causes. For logs and Events.
  std::string describe() const;
};

// Aborts with a log line: a Result was read the wrong way (a bug, like a failed CHECK). Kept out of
// line so this header does not pull glog's CHECK macro into files that use Catch2's.
[[noreturn]] void result_misuse(const char* what, const ApiError* error);

// A value or the ApiError that prevented it: a small stand-in for std::expected<T, ApiError>,
// which GCC 12 lacks. Failures on network paths are values, never exceptions.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  Result(ApiError error) : v_(std::in_place_index<1>, std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    if (!ok()) result_misuse("Result::value() on an error", &std::get<1>(v_));
    return std::get<0>(v_);
  }
  const T& value() const& {
    if (!ok()) result_misuse("Result::value() on an error", &std::get<1>(v_));
    return std::get<0>(v_);
  }
  T&& value() && {
    if (!ok()) result_misuse("Result::value() on an error", &std::get<1>(v_));
    return std::get<0>(std::move(v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const ApiError& error() const& {
    if (ok()) result_misuse("Result::error() on a value", nullptr);
    return std::get<1>(v_);
  }
  ApiError&& error() && {
    if (ok()) result_misuse("Result::error() on a value", nullptr);
    return std::get<1>(std::move(v_));
  }

 private:
  std::variant<T, ApiError> v_;
};

// For operations that yield nothing but success or an error.
struct Ok {};

}  // namespace asop

template <>
struct std::is_error_code_enum<asop::Errc> : std::true_type {};
