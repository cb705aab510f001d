#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace kube {

// Kubernetes failure kinds, as client-go's apierrors.Is* functions tell them apart. Registered as a
// std::error_code category so callers compare codes, never message text.
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
  timeout,      // 504, or reason Timeout / ServerTimeout
  unavailable,  // 503, connection refused, TLS or socket failures talking to the server
  internal,     // other 5xx
  unknown,
};

const std::error_category& api_category();
std::error_code make_error_code(Errc e);

// One entry of Status.details.causes.
struct StatusCause {
  std::string type;
  std::string message;
  std::string field;
};

// A failed request: the kind, and what the server said, kept for logs and Events.
struct ApiError {
  std::error_code code;
  int http_status = 0;  // 0 when no response arrived
  std::string reason;   // Status.reason, e.g. "AlreadyExists"
  std::string message;  // Status.message, or the transport error's text
  std::vector<StatusCause> causes;
  std::optional<std::chrono::seconds> retry_after;

  bool is(Errc e) const { return code == make_error_code(e); }
  // "AlreadyExists (409): deployments.apps \"x\" already exists" style, for logs and Events.
  std::string describe() const;
};

// The kind for an HTTP status code, refined by Status.reason when the body has one.
Errc errc_from_status(int http_status, std::string_view reason = {});

// Builds the error for a non-2xx response; `body` is usually a metav1.Status in JSON but may be
// anything (HTML from a proxy, empty). `retry_after` is the raw Retry-After header, if any.
ApiError api_error_from_response(int http_status, std::string_view body,
                                 std::string_view retry_after = {});

// A transport failure (no response, or a broken one); classified as Errc::unavailable or
// Errc::timeout so callers need not know Asio or OpenSSL codes.
ApiError api_error_from_transport(std::error_code ec, std::string_view what);

}  // namespace kube

template <>
struct std::is_error_code_enum<kube::Errc> : std::true_type {};
