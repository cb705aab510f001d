// SPDX-License-Identifier: Apache-2.0
#include "kube/core/api_error.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <array>
#include <boost/asio/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/system/error_code.hpp>
#include <charconv>
#include <cstdint>
#include <utility>

#include "kube/core/json_access.h"

namespace kube {
namespace {

// Texts for a kind: the category message, the client-go default Status.reason, and the message
// client-go's NewGenericServerResponse uses when the body says nothing useful.
struct ErrcInfo {
  Errc errc;
  std::string_view name;
  std::string_view reason;
  std::string_view default_message;
};

constexpr std::array kErrcInfo{
    ErrcInfo{Errc::not_found, "not found", "NotFound",
             "the server could not find the requested resource"},
    ErrcInfo{Errc::already_exists, "already exists", "AlreadyExists",
             "the resource already exists"},
    ErrcInfo{Errc::conflict, "conflict", "Conflict", "the server reported a conflict"},
    ErrcInfo{Errc::gone, "gone", "Gone", "the requested resource version is no longer available"},
    ErrcInfo{Errc::too_many_requests, "too many requests", "TooManyRequests",
             "the server has received too many requests and has asked us to try again later"},
    ErrcInfo{Errc::forbidden, "forbidden", "Forbidden",
             "the server does not allow access to the requested resource"},
    ErrcInfo{Errc::unauthorized, "unauthorized", "Unauthorized",
             "the server has asked for the client to provide credentials"},
    ErrcInfo{Errc::invalid, "invalid", "Invalid",
             "the server rejected our request due to an error in our request"},
    ErrcInfo{Errc::bad_request, "bad request", "BadRequest",
             "the server rejected our request for an unknown reason"},
    ErrcInfo{Errc::method_not_allowed, "method not allowed", "MethodNotAllowed",
             "the server does not allow this method on the requested resource"},
    ErrcInfo{Errc::unsupported_media_type, "unsupported media type", "UnsupportedMediaType",
             "the server does not support the content type of the request"},
    ErrcInfo{Errc::request_entity_too_large, "request entity too large", "RequestEntityTooLarge",
             "the server has rejected the request because it is too large"},
    ErrcInfo{Errc::timeout, "timeout", "Timeout",
             "the server was unable to return a response in the time allotted, but may still be "
             "processing the request"},
    ErrcInfo{Errc::unavailable, "unavailable", "ServiceUnavailable",
             "the server is currently unable to handle the request"},
    ErrcInfo{Errc::internal, "internal error", "InternalError",
             "an error on the server has prevented the request from succeeding"},
    ErrcInfo{Errc::response_too_large, "response too large", "",
             "the response is larger than this client accepts"},
    // Last: info_for() falls back to it.
    ErrcInfo{Errc::unknown, "unknown error", "", "the server returned an unexpected response"},
};

const ErrcInfo* find_info(int value) {
  for (const auto& info : kErrcInfo) {
    if (static_cast<int>(info.errc) == value) return &info;
  }
  return nullptr;
}

const ErrcInfo& info_for(Errc e) {
  const ErrcInfo* info = find_info(static_cast<int>(e));
  return info != nullptr ? *info : kErrcInfo.back();
}

class ApiCategory final : public std::error_category {
 public:
  const char* name() const noexcept override { return "kube"; }
  std::string message(int value) const override {
    const ErrcInfo* info = find_info(value);
    return info != nullptr ? std::string(info->name) : "unrecognized kube error";
  }
};

// metav1.StatusReason values that decide the kind on their own (client-go's knownReasons).
std::optional<Errc> errc_from_reason(std::string_view reason) {
  static constexpr std::pair<std::string_view, Errc> kReasons[] = {
      {"NotFound", Errc::not_found},
      {"AlreadyExists", Errc::already_exists},
      {"Conflict", Errc::conflict},
      {"Gone", Errc::gone},
      {"Expired", Errc::gone},
      {"TooManyRequests", Errc::too_many_requests},
      {"Forbidden", Errc::forbidden},
      {"Unauthorized", Errc::unauthorized},
      {"Invalid", Errc::invalid},
      {"BadRequest", Errc::bad_request},
      {"MethodNotAllowed", Errc::method_not_allowed},
      {"UnsupportedMediaType", Errc::unsupported_media_type},
      {"RequestEntityTooLarge", Errc::request_entity_too_large},
      {"Timeout", Errc::timeout},
      {"ServerTimeout", Errc::timeout},
      {"ServiceUnavailable", Errc::unavailable},
      {"InternalError", Errc::internal},
  };
  for (const auto& [name, errc] : kReasons) {
    if (name == reason) return errc;
  }
  return std::nullopt;
}

// Length of the valid UTF-8 sequence starting at text[i], or 0 when it is not valid (overlong
// forms, surrogates and code points above U+10FFFF are rejected).
std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  std::size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the first continuation byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    len = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    len = 3;
    if (lead == 0xE0) lo = 0xA0;
    if (lead == 0xED) hi = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    len = 4;
    if (lead == 0xF0) lo = 0x90;
    if (lead == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + len > text.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  return len;
}

std::string_view string_member(const rapidjson::Value& object, const char* name) {
  return json::string_view(json::member(&object, name));
}

// Only the integral "delay-seconds" form: client-go ignores the HTTP-date form and so do we.
std::optional<std::chrono::seconds> parse_retry_after(std::string_view header) {
  while (!header.empty() && (header.front() == ' ' || header.front() == '\t')) {
    header.remove_prefix(1);
  }
  while (!header.empty() && (header.back() == ' ' || header.back() == '\t')) {
    header.remove_suffix(1);
  }
  if (header.empty() || header.size() > 10) return std::nullopt;  // also refuses "+1", "-1"
  std::int64_t seconds = 0;
  const auto [end, ec] = std::from_chars(header.data(), header.data() + header.size(), seconds);
  if (ec != std::errc() || end != header.data() + header.size() || seconds < 0) {
    return std::nullopt;
  }
  return std::chrono::seconds(seconds);
}

// A Status (or anything that looks like one without a kind); other JSON is treated as opaque text.
bool looks_like_status(const rapidjson::Value& value) {
  if (!value.IsObject()) return false;
  const auto kind = value.FindMember("kind");
  if (kind != value.MemberEnd()) {
    return kind->value.IsString() && std::string_view(kind->value.GetString()) == "Status";
  }
  return !string_member(value, "reason").empty() || !string_member(value, "message").empty();
}

// Copies reason, message, causes and retryAfterSeconds; returns Status.code (0 when absent).
int read_status(const rapidjson::Value& status, ApiError& error) {
  error.reason = one_line_excerpt(string_member(status, "reason"), kMaxBodyExcerptBytes);
  error.message = one_line_excerpt(string_member(status, "message"), kMaxErrorMessageBytes);
  const auto details = status.FindMember("details");
  if (details != status.MemberEnd() && details->value.IsObject()) {
    const auto retry = details->value.FindMember("retryAfterSeconds");
    // As client-go's SuggestsClientDelay: only a positive value is a suggestion.
    if (retry != details->value.MemberEnd() && retry->value.IsInt() && retry->value.GetInt() > 0) {
      error.retry_after = std::chrono::seconds(retry->value.GetInt());
    }
    const auto causes = details->value.FindMember("causes");
    if (causes != details->value.MemberEnd() && causes->value.IsArray()) {
      for (const auto& cause : causes->value.GetArray()) {
        if (error.causes.size() >= kMaxStatusCauses) break;
        if (!cause.IsObject()) continue;
        error.causes.push_back(StatusCause{
            one_line_excerpt(string_member(cause, "reason"), kMaxBodyExcerptBytes),
            one_line_excerpt(string_member(cause, "message"), kMaxBodyExcerptBytes),
            one_line_excerpt(string_member(cause, "field"), kMaxBodyExcerptBytes),
        });
      }
    }
  }
  const auto code = status.FindMember("code");
  if (code != status.MemberEnd() && code->value.IsInt()) return code->value.GetInt();
  return 0;
}

void set_kind(ApiError& error, int status_code) {
  const Errc errc = errc_from_status(status_code, error.reason);
  error.code = make_error_code(errc);
  error.http_status = status_code;
  const ErrcInfo& info = info_for(errc);
  if (error.reason.empty()) error.reason = std::string(info.reason);
  if (error.message.empty()) error.message = std::string(info.default_message);
}

void append_bounded(std::string& out, std::string_view text) {
  if (out.size() >= kMaxDescribeBytes + 1) return;
  out.append(text.substr(0, kMaxDescribeBytes + 1 - out.size()));
}

}  // namespace

Errc errc_from_status(int http_status, std::string_view reason) {
  if (const auto by_reason = errc_from_reason(reason)) return *by_reason;
  switch (http_status) {
    case 400:
      return Errc::bad_request;
    case 401:
      return Errc::unauthorized;
    case 403:
      return Errc::forbidden;
    case 404:
      return Errc::not_found;
    case 405:
      return Errc::method_not_allowed;
    case 409:
      return Errc::conflict;
    case 410:
      return Errc::gone;
    case 413:
      return Errc::request_entity_too_large;
    case 415:
      return Errc::unsupported_media_type;
    case 422:
      return Errc::invalid;
    case 429:
      return Errc::too_many_requests;
    case 500:
      return Errc::internal;
    // A proxy answers 502 when it cannot reach the API server: as transient as a 503.
    case 502:
    case 503:
      return Errc::unavailable;
    case 504:
      return Errc::timeout;
    default:
      return http_status >= 500 && http_status <= 599 ? Errc::internal : Errc::unknown;
  }
}

ApiError api_error_from_response(int http_status, std::string_view body,
                                 std::string_view retry_after) {
  ApiError error;
  rapidjson::Document doc;
  // Iterative parsing: a deeply nested body must not exhaust the stack.
  doc.Parse<rapidjson::kParseIterativeFlag>(body.data(), body.size());
  int status_code = 0;
  if (!doc.HasParseError() && looks_like_status(doc)) {
    status_code = read_status(doc, error);
  } else {
    error.message = one_line_excerpt(body, kMaxBodyExcerptBytes);
  }
  // The status line is what the server (or a proxy) actually answered; Status.code only fills in
  // when the caller has none.
  set_kind(error, http_status != 0 ? http_status : status_code);
  if (const auto header = parse_retry_after(retry_after)) error.retry_after = header;
  return error;
}

ApiError api_error_from_status(const rapidjson::Value& status, int http_status) {
  ApiError error;
  int status_code = 0;
  if (status.IsObject()) status_code = read_status(status, error);
  set_kind(error, status_code != 0 ? status_code : http_status);
  return error;
}

ApiError api_error_from_transport(std::error_code ec, std::string_view what) {
  ApiError error;
  const std::error_code beast_timeout = boost::system::error_code(boost::beast::error::timeout);
  const std::error_code asio_timeout = boost::system::error_code(boost::asio::error::timed_out);
  if (ec.category() == api_category()) {
    error.code = ec;  // already classified, e.g. passed through a second layer
  } else if (ec == beast_timeout || ec == asio_timeout || ec == std::errc::timed_out) {
    error.code = make_error_code(Errc::timeout);
  } else {
    error.code = make_error_code(Errc::unavailable);
  }
  error.message = one_line_excerpt(std::string(what) + ": " + ec.message(), kMaxErrorMessageBytes);
  return error;
}

std::string one_line_excerpt(std::string_view text, std::size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes));
  bool pending_space = false;
  bool cut = false;
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c <= 0x20 || c == 0x7F) {  // whitespace and control characters: one space between words
      pending_space = true;
      ++i;
      continue;
    }
    std::size_t len = 1;
    std::string_view piece = text.substr(i, 1);
    if (c >= 0x80) {
      len = utf8_sequence_length(text, i);
      if (len == 0) {
        len = 1;
        piece = "?";
      } else {
        piece = text.substr(i, len);
      }
    }
    const bool space = pending_space && !out.empty();
    if (out.size() + (space ? 1 : 0) + piece.size() > max_bytes) {
      cut = true;
      break;
    }
    if (space) out += ' ';
    pending_space = false;
    out += piece;
    i += len;
  }
  if (cut && max_bytes >= 3) {
    // Make room for "..." by dropping whole characters; `out` holds only valid UTF-8.
    while (!out.empty() && out.size() + 3 > max_bytes) {
      while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) {
        out.pop_back();
      }
      if (!out.empty()) out.pop_back();
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "...";
  }
  return out;
}

}  // namespace kube

namespace asop {

const std::error_category& api_category() {
  static const kube::ApiCategory category;
  return category;
}

std::error_code make_error_code(Errc e) {
  return {static_cast<int>(e), api_category()};
}

std::string_view default_reason(Errc e) {
  return kube::info_for(e).reason;
}

std::string ApiError::describe() const {
  std::string out = reason.empty() ? code.message() : reason;
  if (http_status != 0) out += " (" + std::to_string(http_status) + ")";
  if (!message.empty()) {
    kube::append_bounded(out, ": ");
    kube::append_bounded(out, message);
  }
  if (!causes.empty()) {
    kube::append_bounded(out, " [");
    for (std::size_t i = 0; i < causes.size(); ++i) {
      if (i != 0) kube::append_bounded(out, "; ");
      if (!causes[i].field.empty()) {
        kube::append_bounded(out, causes[i].field);
        kube::append_bounded(out, ": ");
      }
      kube::append_bounded(out, causes[i].message.empty() ? causes[i].type : causes[i].message);
    }
    kube::append_bounded(out, "]");
  }
  return kube::one_line_excerpt(out, kube::kMaxDescribeBytes);
}

}  // namespace asop
