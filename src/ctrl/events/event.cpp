// SPDX-License-Identifier: Apache-2.0
#include "ctrl/events/event.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "asop/object.h"

namespace ctrl {
namespace chr = std::chrono;

namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when the bytes there are not one
// (overlong forms, surrogates and code points past U+10FFFF included, as Go's utf8 package).
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return n;
}

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void write_string(Writer& w, std::string_view key, std::string_view value) {
  w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
  w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}

}  // namespace

std::string truncate_utf8(std::string_view text, std::size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes));
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_sequence_length(text, i);
    const std::size_t take = n == 0 ? 1 : n;
    if (out.size() + take > max_bytes) break;
    if (n == 0) {
      out += '?';
    } else {
      out.append(text.substr(i, n));
    }
    i += take;
  }
  return out;
}

std::string format_event_time(Clock::WallTime t) {
  // floor, not duration_cast: a time before 1970 must not round toward the epoch.
  const auto secs = chr::floor<chr::seconds>(t.time_since_epoch());
  const auto days = chr::floor<chr::days>(secs);
  const chr::year_month_day ymd{chr::sys_days{days}};
  const chr::hh_mm_ss<chr::seconds> tod{secs - days};
  char buf[32];
  const int n =
      std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02dZ", static_cast<int>(ymd.year()),
                    static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                    static_cast<int>(tod.hours().count()), static_cast<int>(tod.minutes().count()),
                    static_cast<int>(tod.seconds().count()));
  return std::string(buf, static_cast<std::size_t>(n));
}

std::string event_create_body(const EventRecord& e, const EventSource& source) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  write_string(w, "apiVersion", "v1");
  write_string(w, "kind", "Event");
  w.Key("metadata");
  w.StartObject();
  write_string(w, "name", e.name);
  write_string(w, "namespace", e.ns);
  w.EndObject();
  w.Key("involvedObject");
  w.StartObject();
  write_string(w, "apiVersion", e.involved.api_version);
  write_string(w, "kind", e.involved.kind);
  write_string(w, "name", e.involved.name);
  if (!e.involved.ns.empty()) write_string(w, "namespace", e.involved.ns);
  write_string(w, "uid", e.involved.uid);
  if (e.involved.resource_version) {
    write_string(w, "resourceVersion", *e.involved.resource_version);
  }
  w.EndObject();
  write_string(w, "reason", e.reason);
  write_string(w, "message", e.message);
  write_string(w, "type", to_string(e.type));
  w.Key("source");
  w.StartObject();
  write_string(w, "component", source.component);
  w.EndObject();
  write_string(w, "firstTimestamp", format_event_time(e.first_timestamp));
  write_string(w, "lastTimestamp", format_event_time(e.last_timestamp));
  w.Key("count");
  w.Int(e.count);
  // eventTime stays unset: with it, the API server validates the Event as an events.k8s.io one
  // (reportingController required, no firstTimestamp), which is not what core/v1 writers send.
  write_string(w, "reportingComponent", source.component);
  write_string(w, "reportingInstance", source.instance);
  w.EndObject();
  return {buffer.GetString(), buffer.GetSize()};
}

std::string event_patch_body(const EventRecord& e) {
  // client-go's EventLogger patches exactly these three fields (createPatch in events_cache.go).
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("count");
  w.Int(e.count);
  write_string(w, "lastTimestamp", format_event_time(e.last_timestamp));
  write_string(w, "message", e.message);
  w.EndObject();
  return {buffer.GetString(), buffer.GetSize()};
}

}  // namespace ctrl

namespace asop {

std::string_view to_string(EventType type) {
  return type == EventType::warning ? "Warning" : "Normal";
}

ObjectReference::ObjectReference(std::string api_version_, std::string kind_, std::string ns_,
                                 std::string name_, std::string uid_)
    : api_version(std::move(api_version_)),
      kind(std::move(kind_)),
      ns(std::move(ns_)),
      name(std::move(name_)),
      uid(std::move(uid_)) {}

ObjectReference reference_to(const Kind& kind, const rapidjson::Value& object) {
  const auto* meta = json::member(&object, "metadata");
  return ObjectReference(kind.api_version, kind.kind, json::text(json::member(meta, "namespace")),
                         json::text(json::member(meta, "name")),
                         json::text(json::member(meta, "uid")));
}

}  // namespace asop
