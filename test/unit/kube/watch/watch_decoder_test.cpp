// SPDX-License-Identifier: Apache-2.0
#include "kube/watch/watch_decoder.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "kube/core/api_error.h"

using kube::Errc;
using kube::WatchDecodeError;
using kube::WatchDecoder;
using kube::WatchEvent;

namespace {

// Events as kube-apiserver writes them for `GET .../appservices?watch=1&allowWatchBookmarks=true`.
const std::string kAdded =
    R"({"type":"ADDED","object":{"apiVersion":"app.example.com/v1","kind":"AppService",)"
    R"("metadata":{"name":"web","namespace":"default","uid":"3f1c9a52-0f3e-4c43-9d7e-1a2b3c4d5e6f",)"
    R"("resourceVersion":"1001","generation":1,"creationTimestamp":"2024-05-01T10:00:00Z",)"
    R"("managedFields":[{"manager":"kubectl","operation":"Update","apiVersion":"app.example.com/v1"}]},)"
    R"("spec":{"size":2,"image":"nginx:1.7.9","ports":[{"port":80,"targetPort":80,"nodePort":30002}]}}})";
const std::string kModified =
    R"({"type":"MODIFIED","object":{"apiVersion":"app.example.com/v1","kind":"AppService",)"
    R"("metadata":{"name":"web","namespace":"default","uid":"3f1c9a52-0f3e-4c43-9d7e-1a2b3c4d5e6f",)"
    R"("resourceVersion":"1002","generation":2},"spec":{"size":3,"image":"nginx:1.7.9",)"
    R"("envs":[{"name":"GREETING","value":"caf\u00e9 \"quoted\" {braces} [and] \\n newline"}]}}})";
const std::string kBookmark =
    R"({"type":"BOOKMARK","object":{"kind":"AppService","apiVersion":"app.example.com/v1",)"
    R"("metadata":{"resourceVersion":"1010","creationTimestamp":null,)"
    R"("annotations":{"k8s.io/initial-events-end":"true"}},"spec":{}}})";
const std::string kDeleted =
    R"({"type":"DELETED","object":{"apiVersion":"app.example.com/v1","kind":"AppService",)"
    R"("metadata":{"name":"web","namespace":"default","uid":"3f1c9a52-0f3e-4c43-9d7e-1a2b3c4d5e6f",)"
    R"("resourceVersion":"1011","deletionTimestamp":"2024-05-01T10:05:00Z"},"spec":{"size":3}}})";
const std::string kExpired =
    R"j({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},)j"
    R"j("status":"Failure","message":"too old resource version: 1001 (1200)","reason":"Expired",)j"
    R"j("code":410}})j";

std::string stream(std::string_view eol = "\n") {
  std::string s;
  for (const auto* line : {&kAdded, &kModified, &kBookmark, &kDeleted, &kExpired}) {
    s += *line;
    s += eol;
  }
  return s;
}

// A comparable digest of an item: type, resource version, the object's name, the error kind.
std::string summary(const WatchDecoder::Item& item) {
  if (const auto* error = std::get_if<WatchDecodeError>(&item)) {
    return "decode-error kind=" + std::to_string(static_cast<int>(error->kind)) +
           " line=" + std::to_string(error->line) + " " + error->message;
  }
  const auto& event = std::get<WatchEvent>(item);
  std::string s = std::string(kube::to_string(event.type)) + " rv=" + event.resource_version;
  const auto& obj = *event.object;
  if (obj.HasMember("metadata") && obj["metadata"].HasMember("name")) {
    s += " name=" + std::string(obj["metadata"]["name"].GetString());
  }
  if (event.error) s += " error=" + event.error->describe();
  return s;
}

void collect(std::vector<std::string>& out, const std::vector<WatchDecoder::Item>& items) {
  for (const auto& item : items) out.push_back(summary(item));
}

std::vector<std::string> decode_chunks(const std::vector<std::string_view>& chunks,
                                       std::size_t max_line = WatchDecoder::kDefaultMaxLineBytes) {
  WatchDecoder decoder(max_line);
  std::vector<std::string> out;
  for (const auto chunk : chunks) collect(out, decoder.feed(chunk));
  collect(out, decoder.finish());
  CHECK(decoder.buffered_bytes() == 0);
  return out;
}

std::vector<std::string> decode_whole(std::string_view s,
                                      std::size_t max_line = WatchDecoder::kDefaultMaxLineBytes) {
  return decode_chunks({s}, max_line);
}

std::vector<std::string> decode_bytewise(
    std::string_view s, std::size_t max_line = WatchDecoder::kDefaultMaxLineBytes) {
  std::vector<std::string_view> chunks;
  for (std::size_t i = 0; i < s.size(); ++i) chunks.push_back(s.substr(i, 1));
  return decode_chunks(chunks, max_line);
}

// Every split into two chunks, plus byte-at-a-time, must equal the whole-stream decode.
void check_split_invariant(std::string_view s,
                           std::size_t max_line = WatchDecoder::kDefaultMaxLineBytes) {
  const auto whole = decode_whole(s, max_line);
  for (std::size_t cut = 0; cut <= s.size(); ++cut) {
    const auto split = decode_chunks({s.substr(0, cut), s.substr(cut)}, max_line);
    if (split != whole) {
      CAPTURE(cut);
      REQUIRE(split == whole);
    }
  }
  CHECK(decode_bytewise(s, max_line) == whole);
}

const WatchDecodeError& error_at(const std::vector<WatchDecoder::Item>& items, std::size_t i) {
  REQUIRE(i < items.size());
  REQUIRE(std::holds_alternative<WatchDecodeError>(items[i]));
  return std::get<WatchDecodeError>(items[i]);
}

const WatchEvent& event_at(const std::vector<WatchDecoder::Item>& items, std::size_t i) {
  REQUIRE(i < items.size());
  REQUIRE(std::holds_alternative<WatchEvent>(items[i]));
  return std::get<WatchEvent>(items[i]);
}

}  // namespace

TEST_CASE("a realistic watch stream decodes to the expected events", "[watch]") {
  WatchDecoder decoder;
  const auto items = decoder.feed(stream());
  REQUIRE(items.size() == 5);

  const WatchEvent& added = event_at(items, 0);
  CHECK(added.type == WatchEvent::Type::added);
  CHECK(added.resource_version == "1001");
  REQUIRE(added.object);
  // The event's object is the document root, not the envelope.
  CHECK(std::string((*added.object)["kind"].GetString()) == "AppService");
  CHECK((*added.object)["spec"]["size"].GetInt() == 2);
  CHECK_FALSE(added.object->HasMember("type"));
  CHECK_FALSE(added.error.has_value());

  const WatchEvent& modified = event_at(items, 1);
  CHECK(modified.type == WatchEvent::Type::modified);
  CHECK(modified.resource_version == "1002");
  CHECK(std::string((*modified.object)["spec"]["envs"][0]["value"].GetString()) ==
        "caf\xc3\xa9 \"quoted\" {braces} [and] \\n newline");

  const WatchEvent& bookmark = event_at(items, 2);
  CHECK(bookmark.type == WatchEvent::Type::bookmark);
  CHECK(bookmark.resource_version == "1010");

  const WatchEvent& deleted = event_at(items, 3);
  CHECK(deleted.type == WatchEvent::Type::deleted);
  CHECK(deleted.resource_version == "1011");

  const WatchEvent& expired = event_at(items, 4);
  CHECK(expired.type == WatchEvent::Type::error);
  CHECK(expired.resource_version.empty());
  REQUIRE(expired.error.has_value());
  CHECK(expired.error->is(Errc::gone));
  CHECK(expired.error->http_status == 410);
  CHECK(expired.error->reason == "Expired");
  CHECK(expired.error->message == "too old resource version: 1001 (1200)");
  CHECK(std::string((*expired.object)["kind"].GetString()) == "Status");
  // Same kind as the HTTP 410 a list would get.
  CHECK(expired.error->code == kube::api_error_from_response(410, "").code);

  CHECK(decoder.buffered_bytes() == 0);
  CHECK(decoder.finish().empty());
}

TEST_CASE("framing does not depend on how chunks split the stream", "[watch]") {
  const std::string s = stream();
  const auto whole = decode_whole(s);
  REQUIRE(whole == std::vector<std::string>{
                       "ADDED rv=1001 name=web",
                       "MODIFIED rv=1002 name=web",
                       "BOOKMARK rv=1010",
                       "DELETED rv=1011 name=web",
                       "ERROR rv= error=Expired (410): too old resource version: 1001 (1200)",
                   });
  SECTION("split at every byte position into two chunks") {
    for (std::size_t cut = 0; cut <= s.size(); ++cut) {
      const auto split =
          decode_chunks({std::string_view(s).substr(0, cut), std::string_view(s).substr(cut)});
      if (split != whole) {
        CAPTURE(cut);
        REQUIRE(split == whole);
      }
    }
  }
  SECTION("one byte at a time") {
    CHECK(decode_bytewise(s) == whole);
  }
  SECTION("CRLF line ends give the same events, however split") {
    const std::string crlf = stream("\r\n");
    CHECK(decode_whole(crlf) == whole);
    check_split_invariant(crlf);
  }
  SECTION("blank lines between events are skipped") {
    const std::string blanks = "\n\r\n  \n" + kAdded + "\n\n\t\r\n" + kModified + "\n" + kBookmark +
                               "\n" + kDeleted + "\n\n" + kExpired + "\n\n";
    CHECK(decode_whole(blanks) == whole);
    check_split_invariant(blanks);
  }
}

TEST_CASE("a last event without a newline comes out only at finish()", "[watch]") {
  std::string s = stream();
  s.pop_back();  // drop the final '\n'
  WatchDecoder decoder;
  std::vector<std::string> out;
  collect(out, decoder.feed(s));
  CHECK(out.size() == 4);
  CHECK(decoder.buffered_bytes() == kExpired.size());
  collect(out, decoder.finish());
  CHECK(out == decode_whole(stream()));
  CHECK(decoder.buffered_bytes() == 0);
  check_split_invariant(s);

  // A lone '\r' at the very end is a line end missing its '\n'.
  CHECK(decode_whole(s + "\r") == decode_whole(stream()));
}

TEST_CASE("finish() resets the decoder for the next stream", "[watch]") {
  WatchDecoder decoder;
  CHECK(decoder.feed(kAdded.substr(0, 20)).empty());
  CHECK(decoder.feed("\n").size() == 1);  // a truncated line is an error, not a hang
  CHECK(decoder.feed(kAdded.substr(0, 20)).empty());
  const auto end = decoder.finish();
  REQUIRE(end.size() == 1);
  CHECK(error_at(end, 0).line == 2);
  // Fresh stream: numbering restarts and nothing is left over.
  const auto items = decoder.feed("garbage\n" + kAdded + "\n");
  REQUIRE(items.size() == 2);
  CHECK(error_at(items, 0).line == 1);
  CHECK(event_at(items, 1).resource_version == "1001");
}

TEST_CASE("malformed lines are errors that do not poison later lines", "[watch]") {
  using Kind = WatchDecodeError::Kind;
  struct Case {
    std::string line;
    Kind kind;
    std::string_view needle;  // expected in the message
  };
  const std::vector<Case> cases = {
      {R"({"type":"ADDED","object":{"metadata":{})", Kind::malformed_json, "malformed JSON"},
      {"<html>502 Bad Gateway</html>", Kind::malformed_json, "<html>502 Bad Gateway</html>"},
      {R"({"type":"ADDED","object":{}} {"type":"ADDED","object":{}})", Kind::malformed_json,
       "malformed JSON"},
      {"{\"type\":\"ADDED\",\"object\":{\"name\":\"\xff\"}}", Kind::malformed_json,
       "malformed JSON"},
      {std::string(5000, '[') + std::string(5000, ']'), Kind::malformed_json, "nested too deeply"},
      {"[1,2,3]", Kind::invalid_event, "not a JSON object"},
      {R"("ADDED")", Kind::invalid_event, "not a JSON object"},
      {R"({"object":{}})", Kind::invalid_event, "no string \"type\""},
      {R"({"type":1,"object":{}})", Kind::invalid_event, "no string \"type\""},
      {R"({"type":"ADDED"})", Kind::invalid_event, "ADDED has no \"object\""},
      {R"({"type":"MODIFIED","object":"x"})", Kind::invalid_event, "has no \"object\""},
      {R"({"type":"BOOKMARK","object":{"metadata":{}}})", Kind::invalid_event,
       "BOOKMARK without metadata.resourceVersion"},
      {R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":7}}})", Kind::invalid_event,
       "BOOKMARK without"},
      {R"({"type":"SYNC","object":{}})", Kind::unknown_type, "unknown event type \"SYNC\""},
      {R"({"type":"added","object":{}})", Kind::unknown_type, "unknown event type \"added\""},
  };
  for (const auto& c : cases) {
    CAPTURE(c.line.substr(0, 80));
    const std::string s = kAdded + "\n" + c.line + "\n" + kModified + "\n";
    WatchDecoder decoder;
    const auto items = decoder.feed(s);
    REQUIRE(items.size() == 3);
    CHECK(event_at(items, 0).type == WatchEvent::Type::added);
    const WatchDecodeError& error = error_at(items, 1);
    CHECK(error.kind == c.kind);
    CHECK(error.line == 2);
    CHECK(error.message.find(c.needle) != std::string::npos);
    CHECK(error.message.find("watch line 2: ") == 0);
    CHECK(error.message.size() < 400);
    CHECK(event_at(items, 2).type == WatchEvent::Type::modified);
    check_split_invariant(s);
  }
}

TEST_CASE("events with odd but valid content still decode", "[watch]") {
  // An object without metadata, extra envelope fields, and whitespace around the JSON.
  const auto items = WatchDecoder().feed(
      "  {\"type\":\"DELETED\",\"extra\":[1],\"object\":{\"kind\":\"X\"}}  \r\n"
      "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":500,\"reason\":"
      "\"InternalError\","
      "\"message\":\"etcd\"}}\n"
      "{\"type\":\"ERROR\",\"object\":{}}\n");
  REQUIRE(items.size() == 3);
  CHECK(event_at(items, 0).type == WatchEvent::Type::deleted);
  CHECK(event_at(items, 0).resource_version.empty());
  REQUIRE(event_at(items, 1).error.has_value());
  CHECK(event_at(items, 1).error->is(Errc::internal));
  REQUIRE(event_at(items, 2).error.has_value());
  CHECK(event_at(items, 2).error->is(Errc::unknown));
}

TEST_CASE("the line length limit bounds memory and skips only the long line", "[watch]") {
  using Kind = WatchDecodeError::Kind;
  const std::string small = R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}})";
  const std::size_t limit = small.size();  // `small` fits exactly
  const std::string big = R"({"type":"ADDED","object":{"data":")" + std::string(500, 'x') + "\"}}";

  SECTION("an oversized line between good ones") {
    const std::string s = small + "\n" + big + "\n" + small + "\r\n";
    const auto whole = decode_whole(s, limit);
    REQUIRE(whole.size() == 3);
    CHECK(whole[0] == "BOOKMARK rv=9");
    CHECK(whole[1].find("line=2 watch line 2: event longer than the limit of " +
                        std::to_string(limit) + " bytes") != std::string::npos);
    CHECK(whole[2] == "BOOKMARK rv=9");
    check_split_invariant(s, limit);
  }
  SECTION("byte-at-a-time feeding never buffers more than the limit") {
    WatchDecoder decoder(limit);
    const std::string s = big + "\n" + small + "\n";
    std::vector<WatchDecoder::Item> items;
    for (const char c : s) {
      for (auto& item : decoder.feed(std::string_view(&c, 1))) items.push_back(std::move(item));
      CHECK(decoder.buffered_bytes() <= limit + 1);
    }
    REQUIRE(items.size() == 2);
    CHECK(error_at(items, 0).kind == Kind::line_too_long);
    CHECK(event_at(items, 1).resource_version == "9");
  }
  SECTION("a line of exactly the limit is fine with CRLF however it is split") {
    check_split_invariant(small + "\r\n" + small + "\r\n", limit);
    CHECK(decode_whole(small + "\r\n" + small, limit) ==
          std::vector<std::string>{"BOOKMARK rv=9", "BOOKMARK rv=9"});
  }
  SECTION("one byte over the limit is an error however it is split") {
    const std::string over = " " + small;
    for (const char* eol : {"\n", "\r\n", ""}) {
      const std::string s = over + eol;
      const auto whole = decode_whole(s, limit);
      REQUIRE(whole.size() == 1);
      CHECK(whole[0].find("event longer than the limit") != std::string::npos);
      check_split_invariant(s, limit);
    }
  }
  SECTION("an unterminated oversized line at end of stream is reported once") {
    WatchDecoder decoder(limit);
    const auto items = decoder.feed(small + "\n" + big);
    REQUIRE(items.size() == 2);
    CHECK(error_at(items, 1).kind == Kind::line_too_long);
    CHECK(decoder.buffered_bytes() == 0);
    CHECK(decoder.finish().empty());
  }
}

TEST_CASE("the bookmark ending a streaming list's initial events is recognised", "[watch]") {
  WatchDecoder decoder(1 << 20);
  auto items = decoder.feed(
      R"({"type":"BOOKMARK","object":{"kind":"Deployment","apiVersion":"apps/v1","metadata":)"
      R"({"resourceVersion":"12","annotations":{"k8s.io/initial-events-end":"true"}}}})"
      "\n"
      R"({"type":"BOOKMARK","object":{"kind":"Deployment","apiVersion":"apps/v1","metadata":)"
      R"({"resourceVersion":"13"}}})"
      "\n"
      R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"14","annotations":)"
      R"({"k8s.io/initial-events-end":"false"}}}})"
      "\n"
      R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"15","annotations":)"
      R"({"k8s.io/initial-events-end":"true"}}}})"
      "\n");
  REQUIRE(items.size() == 4);
  const bool want[] = {true, false, false, false};  // only a BOOKMARK annotated "true"
  for (std::size_t i = 0; i < items.size(); ++i) {
    REQUIRE(std::holds_alternative<WatchEvent>(items[i]));
    CHECK(std::get<WatchEvent>(items[i]).initial_events_end == want[i]);
  }
}
