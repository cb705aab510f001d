// SPDX-License-Identifier: Apache-2.0
#include "kube/watch/watch_decoder.h"

#include <rapidjson/error/en.h>

#include <cstring>
#include <memory>
#include <utility>

#include "kube/core/json_access.h"

namespace kube {
namespace {

constexpr std::size_t kLineExcerptBytes = 160;

WatchDecodeError decode_error(WatchDecodeError::Kind kind, std::uint64_t line,
                              std::string_view what, std::string_view text) {
  std::string message = "watch line " + std::to_string(line) + ": ";
  message += what;
  if (!text.empty()) {
    message += ": ";
    message += one_line_excerpt(text, kLineExcerptBytes);
  }
  return WatchDecodeError{kind, line, std::move(message)};
}

// Member lookup through const iterators only: RapidJSON 1.1 compares a MemberIterator with a
// ConstMemberIterator ambiguously under C++20's reversed operators (clang errors on it).
const rapidjson::Value* find_member(const rapidjson::Value& object, const char* name) {
  const auto it = object.FindMember(name);
  return it == object.MemberEnd() ? nullptr : &it->value;
}

rapidjson::Value* find_member(rapidjson::Value& object, const char* name) {
  return const_cast<rapidjson::Value*>(find_member(std::as_const(object), name));
}

bool is_blank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

// Whether brackets nest at most max_depth deep, counting only outside strings. Cheap enough to
// run before parsing; a malformed line is left for the parser to reject.
bool depth_within(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > max_depth) return false;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return true;
}

WatchDecoder::Item decode_event(std::string_view line, std::uint64_t number) {
  using Kind = WatchDecodeError::Kind;
  if (!depth_within(line, WatchDecoder::kMaxJsonDepth)) {
    return decode_error(Kind::malformed_json, number, "JSON nested too deeply", line);
  }
  auto doc = std::make_shared<rapidjson::Document>();
  // Iterative: no recursion on input depth. Encoding validated: objects are re-sent to the API
  // server and written to logs, and the server only ever sends UTF-8.
  doc->Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag>(line.data(),
                                                                                     line.size());
  if (doc->HasParseError()) {
    const std::string what = std::string("malformed JSON at byte ") +
                             std::to_string(doc->GetErrorOffset()) + " (" +
                             rapidjson::GetParseError_En(doc->GetParseError()) + ")";
    return decode_error(Kind::malformed_json, number, what, line);
  }
  if (!doc->IsObject()) {
    return decode_error(Kind::invalid_event, number, "event is not a JSON object", line);
  }
  const rapidjson::Value* type_value = find_member(*doc, "type");
  if (type_value == nullptr || !type_value->IsString()) {
    return decode_error(Kind::invalid_event, number, "event has no string \"type\"", line);
  }
  const std::string_view type_name(type_value->GetString(), type_value->GetStringLength());
  const auto type = watch_event_type_from_string(type_name);
  if (!type) {
    return decode_error(Kind::unknown_type, number,
                        "unknown event type \"" + one_line_excerpt(type_name, 64) + "\"", {});
  }
  rapidjson::Value* object_value = find_member(*doc, "object");
  if (object_value == nullptr || !object_value->IsObject()) {
    return decode_error(Kind::invalid_event, number,
                        "event " + std::string(to_string(*type)) + " has no \"object\"", line);
  }
  // Make "object" the document root without copying it: both values live in the document's pool
  // allocator, which frees everything at once, so the detached envelope needs no cleanup.
  rapidjson::Value object;
  object.Swap(*object_value);
  static_cast<rapidjson::Value&>(*doc).Swap(object);

  WatchEvent event;
  event.type = *type;
  event.resource_version =
      json::text(json::member(json::member(doc.get(), "metadata"), "resourceVersion"));
  // A bookmark exists only to move the resourceVersion; without one, an informer would resume
  // from "" (any version) and silently lose its place.
  if (event.type == WatchEvent::Type::bookmark && event.resource_version.empty()) {
    return decode_error(Kind::invalid_event, number, "BOOKMARK without metadata.resourceVersion",
                        line);
  }
  if (event.type == WatchEvent::Type::bookmark) {
    const auto* annotations = json::member(json::member(doc.get(), "metadata"), "annotations");
    event.initial_events_end =
        json::string_view(json::member(annotations, kInitialEventsEndAnnotation.data())) == "true";
  }
  if (event.type == WatchEvent::Type::error) event.error = api_error_from_status(*doc);
  event.object = std::move(doc);
  return event;
}

}  // namespace

WatchDecoder::WatchDecoder(std::size_t max_line_bytes) : max_line_bytes_(max_line_bytes) {}

WatchDecodeError WatchDecoder::too_long(std::uint64_t line) const {
  return decode_error(
      WatchDecodeError::Kind::line_too_long, line,
      "event longer than the limit of " + std::to_string(max_line_bytes_) + " bytes", {});
}

std::vector<WatchDecoder::Item> WatchDecoder::feed(std::string_view bytes) {
  std::vector<Item> out;
  while (!bytes.empty()) {
    const void* found = std::memchr(bytes.data(), '\n', bytes.size());
    const std::size_t end =
        found != nullptr ? static_cast<std::size_t>(static_cast<const char*>(found) - bytes.data())
                         : bytes.size();
    const std::string_view segment = bytes.substr(0, end);
    const bool complete = found != nullptr;
    bytes.remove_prefix(complete ? end + 1 : end);

    if (discarding_) {
      // The rest of an over-long line: already reported, nothing to keep.
    } else if (buffer_.size() + segment.size() > max_line_bytes_ + 1) {
      // Too long even if its last byte turns out to be the '\r' of "\r\n": report it now instead
      // of buffering without bound. The same single error comes out however the bytes are split.
      out.emplace_back(too_long(line_ + 1));
      buffer_.clear();
      buffer_.shrink_to_fit();
      discarding_ = true;
    } else if (complete && buffer_.empty()) {
      take_line(segment, out);  // the common case: a whole line inside one chunk, no copy
    } else {
      buffer_.append(segment);
      if (complete) {
        take_line(buffer_, out);
        buffer_.clear();
      }
    }
    if (complete) {
      ++line_;
      discarding_ = false;
    }
  }
  return out;
}

std::vector<WatchDecoder::Item> WatchDecoder::finish() {
  std::vector<Item> out;
  if (!discarding_ && !buffer_.empty()) take_line(buffer_, out);
  buffer_.clear();
  discarding_ = false;
  line_ = 0;
  return out;
}

void WatchDecoder::take_line(std::string_view line, std::vector<Item>& out) const {
  const std::uint64_t number = line_ + 1;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.size() > max_line_bytes_) {
    out.emplace_back(too_long(number));
    return;
  }
  if (is_blank(line)) return;
  out.push_back(decode_event(line, number));
}

}  // namespace kube
