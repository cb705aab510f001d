// SPDX-License-Identifier: Apache-2.0
#include "kube/api/rest_client.h"

#include <rapidjson/document.h>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <vector>

#include "support/async_test.h"
#include "support/fake_api_server.h"

namespace asio = boost::asio;
namespace http = boost::beast::http;
using asio::awaitable;
using kube::Errc;
using kube::HttpTransport;
using kube::ListOptions;
using kube::PatchType;
using kube::ResourcePath;
using kube::RestClient;
using kube::testing::FakeApiServer;
using kube::testing::run_async;

namespace {

struct Fixture {
  asio::io_context io;
  FakeApiServer server;
  std::shared_ptr<kube::RequestMetrics> metrics = std::make_shared<kube::RequestMetrics>();
  RestClient client;

  explicit Fixture(FakeApiServer::Handler h, int max_retries = RestClient::kDefaultMaxRetries)
      : server(io, std::move(h)), client(make_transport(io, server, metrics), max_retries) {}

  static std::shared_ptr<HttpTransport> make_transport(asio::io_context& io,
                                                       const FakeApiServer& server,
                                                       std::shared_ptr<kube::RequestMetrics> m) {
    kube::RestConfig c;
    c.scheme = "http";
    c.host = "127.0.0.1";
    c.port = std::to_string(server.port());
    return std::make_shared<HttpTransport>(io.get_executor(), c, HttpTransport::Options{}, nullptr,
                                           std::move(m));
  }

  void run(awaitable<void> body) {
    run_async(io, std::move(body), [this] { server.stop(); });
  }
};

rapidjson::Document parse(const std::string& s) {
  rapidjson::Document d;
  d.Parse(s.c_str());
  REQUIRE_FALSE(d.HasParseError());
  return d;
}

std::string query_param(const std::string& target, const std::string& key) {
  const auto q = target.find('?');
  if (q == std::string::npos) return {};
  std::string rest = target.substr(q + 1);
  while (!rest.empty()) {
    const auto amp = rest.find('&');
    const std::string kv = rest.substr(0, amp);
    const auto eq = kv.find('=');
    if (kv.substr(0, eq) == key) return kv.substr(eq + 1);
    if (amp == std::string::npos) break;
    rest = rest.substr(amp + 1);
  }
  return {};
}

const auto kConfigMaps = ResourcePath::from_api_version("v1", "configmaps").in_namespace("ns");

// A list page of ConfigMaps named cm-<first>..cm-<first+n-1>.
std::string page(int first, int n, const std::string& cont, const std::string& rv = "100") {
  std::string items;
  for (int i = first; i < first + n; ++i) {
    if (!items.empty()) items += ",";
    items += R"({"metadata":{"name":"cm-)" + std::to_string(i) + R"("}})";
  }
  std::string md = R"("resourceVersion":")" + rv + "\"";
  if (!cont.empty()) md += R"(,"continue":")" + cont + R"(","remainingItemCount":5)";
  return R"({"kind":"ConfigMapList","apiVersion":"v1","metadata":{)" + md + R"(},"items":[)" +
         items + "]}";
}

}  // namespace

TEST_CASE("get parses the object, errors come from the Status body", "[rest]") {
  Fixture f([](const FakeApiServer::Request& r) {
    if (r.target.ends_with("/cm-1")) {
      return FakeApiServer::Reply::json(200,
                                        R"({"metadata":{"name":"cm-1","resourceVersion":"9"}})");
    }
    return FakeApiServer::Reply::json(
        404,
        R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"configmaps \"nope\" not found","reason":"NotFound","details":{"name":"nope","kind":"configmaps"},"code":404})");
  });
  f.run([&]() -> awaitable<void> {
    auto ok = co_await f.client.get(kConfigMaps.named("cm-1"));
    REQUIRE(ok.ok());
    CHECK(ok->status == 200);
    CHECK(std::string((*ok->body)["metadata"]["resourceVersion"].GetString()) == "9");
    auto missing = co_await f.client.get(kConfigMaps.named("nope"));
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().is(Errc::not_found));
    CHECK(missing.error().http_status == 404);
    CHECK(missing.error().message == "configmaps \"nope\" not found");
  }());
  const std::string host = "127.0.0.1:" + std::to_string(f.server.port());
  CHECK(f.metrics->count("200", "GET", host) == 1);
  CHECK(f.metrics->count("404", "GET", host) == 1);
  const auto snap = f.metrics->snapshot();
  REQUIRE(snap.size() == 2);
  CHECK(snap[0].code == "200");
  CHECK(snap[1].code == "404");
}

TEST_CASE("no verb sends a path that names the wrong thing", "[rest][path]") {
  Fixture f([](const FakeApiServer::Request&) { return FakeApiServer::Reply::json(200, "{}"); });
  f.run([&]() -> awaitable<void> {
    // Sent as is, each of these would reach a different resource than the caller meant.
    auto del = co_await f.client.delete_(kConfigMaps.named(""));
    REQUIRE_FALSE(del.ok());
    CHECK(del.error().is(Errc::bad_request));
    CHECK(del.error().message == "DELETE not sent: resource name may not be empty (configmaps)");
    auto get = co_await f.client.get(kConfigMaps.named(".."));
    CHECK(get.error().message == "GET not sent: name may not be \"..\"");
    auto put =
        co_await f.client.update(kConfigMaps.named("a/b"), kube::JsonBody(std::string("{}")));
    CHECK(put.error().message == "PUT not sent: name may not contain '/'");
    auto patch = co_await f.client.patch(kConfigMaps.named("a%2F.."), PatchType::merge,
                                         kube::JsonBody(std::string("{}")));
    CHECK(patch.error().message == "PATCH not sent: name may not contain '%'");
    auto list = co_await f.client.list(kConfigMaps.in_namespace("."));
    CHECK(list.error().message == "list not sent: namespace may not be \".\"");
    auto post = co_await f.client.create(kConfigMaps.named("x"), kube::JsonBody(std::string("{}")));
    CHECK(post.error().is(Errc::bad_request));
    auto watch = co_await f.client.watch(kConfigMaps.in_namespace(".."), kube::WatchOptions{});
    CHECK(watch.error().message == "watch not sent: namespace may not be \"..\"");
  }());
  CHECK(f.server.requests() == 0);
}

TEST_CASE("429 keeps Retry-After, non-JSON bodies still give a typed error", "[rest]") {
  // Retries off: the error as the caller sees it once they are spent.
  Fixture f(
      [](const FakeApiServer::Request& r) {
        if (r.target.ends_with("/busy")) {
          auto reply = FakeApiServer::Reply::json(
              429,
              R"({"kind":"Status","code":429,"reason":"TooManyRequests","message":"slow down"})");
          reply.headers.emplace_back("Retry-After", "7");
          return reply;
        }
        return FakeApiServer::Reply::json(503, "<html>upstream down</html>");
      },
      0);
  f.run([&]() -> awaitable<void> {
    auto busy = co_await f.client.get(kConfigMaps.named("busy"));
    REQUIRE_FALSE(busy.ok());
    CHECK(busy.error().is(Errc::too_many_requests));
    REQUIRE(busy.error().retry_after.has_value());
    CHECK(*busy.error().retry_after == std::chrono::seconds(7));
    auto down = co_await f.client.get(kConfigMaps.named("down"));
    REQUIRE_FALSE(down.ok());
    CHECK(down.error().is(Errc::unavailable));
    CHECK(down.error().http_status == 503);
  }());
}

namespace {

FakeApiServer::Reply too_many_requests(const char* retry_after) {
  auto reply = FakeApiServer::Reply::json(
      429, R"({"kind":"Status","code":429,"reason":"TooManyRequests","message":"slow down"})");
  if (retry_after) reply.headers.emplace_back("Retry-After", retry_after);
  return reply;
}

}  // namespace

TEST_CASE("a write refused with 429 is sent again after Retry-After, and succeeds", "[rest]") {
  std::vector<std::chrono::steady_clock::time_point> at;
  Fixture f([&](const FakeApiServer::Request&) {
    at.push_back(std::chrono::steady_clock::now());
    if (at.size() == 1) return too_many_requests("1");
    return FakeApiServer::Reply::json(200, R"({"metadata":{"name":"a"}})");
  });
  f.run([&]() -> awaitable<void> {
    auto applied = co_await f.client.apply(kConfigMaps.named("a"),
                                           kube::JsonBody(std::string(R"({"data":{}})")), "test");
    CHECK(applied.ok());
  }());
  REQUIRE(at.size() == 2);
  CHECK(at[1] - at[0] >= std::chrono::seconds(1));  // not before the server said
  CHECK(f.server.seen()[1].method == http::verb::patch);
}

TEST_CASE("Retry-After retries stop after max_retries, without Retry-After there are none",
          "[rest]") {
  int busy = 0;
  int plain = 0;
  int broken = 0;
  Fixture f(
      [&](const FakeApiServer::Request& r) {
        if (r.target.ends_with("/busy")) {
          ++busy;
          return too_many_requests("0");
        }
        if (r.target.ends_with("/plain")) {
          ++plain;
          return too_many_requests(nullptr);
        }
        ++broken;  // a 500 without Retry-After: the server may have done it, never resent
        return FakeApiServer::Reply::json(500, R"({"kind":"Status","code":500})");
      },
      3);
  f.run([&]() -> awaitable<void> {
    auto got = co_await f.client.get(kConfigMaps.named("busy"));
    REQUIRE_FALSE(got.ok());
    CHECK(got.error().is(Errc::too_many_requests));
    got = co_await f.client.get(kConfigMaps.named("plain"));
    CHECK(got.error().is(Errc::too_many_requests));
    got = co_await f.client.create(kConfigMaps, kube::JsonBody(std::string("{}")));
    CHECK_FALSE(got.ok());
  }());
  CHECK(busy == 4);  // the first try and 3 retries
  CHECK(plain == 1);
  CHECK(broken == 1);
}

TEST_CASE("list sends selectors, limit and continue percent-encoded", "[rest]") {
  Fixture f([](const FakeApiServer::Request&) {
    return FakeApiServer::Reply::json(200, page(0, 1, ""));
  });
  f.run([&]() -> awaitable<void> {
    ListOptions o;
    o.label_selector = "app=web,tier!=db";
    o.field_selector = "metadata.name=cm-0";
    o.limit = 7;
    o.continue_token = "abc=";
    o.resource_version = "0";
    auto res = co_await f.client.list(kConfigMaps, o);
    REQUIRE(res.ok());
  }());
  REQUIRE(f.server.requests() == 1);
  CHECK(f.server.seen()[0].target ==
        "/api/v1/namespaces/ns/configmaps?labelSelector=app%3Dweb%2Ctier%21%3Ddb&fieldSelector="
        "metadata.name%3Dcm-0&resourceVersion=0&limit=7&continue=abc%3D");
}

TEST_CASE("list_all follows continue tokens and joins the items", "[rest]") {
  Fixture f([](const FakeApiServer::Request& r) {
    const std::string cont = query_param(r.target, "continue");
    if (cont.empty()) return FakeApiServer::Reply::json(200, page(0, 3, "p2"));
    if (cont == "p2") return FakeApiServer::Reply::json(200, page(3, 3, "p3"));
    return FakeApiServer::Reply::json(200, page(6, 1, ""));
  });
  f.run([&]() -> awaitable<void> {
    ListOptions o;
    o.limit = 3;
    o.resource_version = "0";
    auto res = co_await f.client.list_all(kConfigMaps, o);
    REQUIRE(res.ok());
    const auto& items = (*res->body)["items"];
    REQUIRE(items.Size() == 7);
    for (rapidjson::SizeType i = 0; i < items.Size(); ++i) {
      CHECK(std::string(items[i]["metadata"]["name"].GetString()) == "cm-" + std::to_string(i));
    }
    const auto& md = (*res->body)["metadata"];
    CHECK(std::string(md["resourceVersion"].GetString()) == "100");
    CHECK_FALSE(md.HasMember("continue"));
    CHECK_FALSE(md.HasMember("remainingItemCount"));
  }());
  REQUIRE(f.server.requests() == 3);
  // resourceVersion only on the first page: the server rejects it next to a continue token.
  CHECK(query_param(f.server.seen()[0].target, "resourceVersion") == "0");
  CHECK(query_param(f.server.seen()[1].target, "resourceVersion").empty());
  CHECK(query_param(f.server.seen()[1].target, "limit") == "3");
}

TEST_CASE("list_all restarts from scratch when a continue token expires", "[rest]") {
  int first_pages = 0;
  Fixture f([&](const FakeApiServer::Request& r) {
    const std::string cont = query_param(r.target, "continue");
    if (cont.empty()) {
      ++first_pages;
      return FakeApiServer::Reply::json(
          200, page(first_pages == 1 ? 0 : 100, 2, first_pages == 1 ? "old" : "new"));
    }
    if (cont == "old") {
      return FakeApiServer::Reply::json(
          410,
          R"({"kind":"Status","code":410,"reason":"Expired","message":"The provided continue parameter is too old"})");
    }
    return FakeApiServer::Reply::json(200, page(102, 1, "", "200"));
  });
  f.run([&]() -> awaitable<void> {
    ListOptions o;
    o.limit = 2;
    auto res = co_await f.client.list_all(kConfigMaps, o);
    REQUIRE(res.ok());
    const auto& items = (*res->body)["items"];
    // Nothing from the abandoned first pass survives.
    REQUIRE(items.Size() == 3);
    CHECK(std::string(items[0]["metadata"]["name"].GetString()) == "cm-100");
    CHECK(std::string(items[2]["metadata"]["name"].GetString()) == "cm-102");
  }());
  CHECK(first_pages == 2);
  CHECK(f.server.requests() == 4);
}

TEST_CASE("list_all gives up paging after the second expiry", "[rest]") {
  Fixture f([&](const FakeApiServer::Request& r) {
    const std::string cont = query_param(r.target, "continue");
    if (query_param(r.target, "limit").empty())
      return FakeApiServer::Reply::json(200, page(0, 4, ""));
    if (cont.empty()) return FakeApiServer::Reply::json(200, page(0, 2, "tok"));
    return FakeApiServer::Reply::json(410, R"({"kind":"Status","code":410,"reason":"Expired"})");
  });
  f.run([&]() -> awaitable<void> {
    auto res = co_await f.client.list_all(kConfigMaps, ListOptions{});
    REQUIRE(res.ok());
    CHECK((*res->body)["items"].Size() == 4);
  }());
  // page, expired, page, expired, unpaginated list.
  CHECK(f.server.requests() == 5);
  CHECK(query_param(f.server.seen()[0].target, "limit") == "500");
}

TEST_CASE("a 410 on the first page is returned, not retried", "[rest]") {
  Fixture f([](const FakeApiServer::Request&) {
    return FakeApiServer::Reply::json(410, R"({"kind":"Status","code":410,"reason":"Expired"})");
  });
  f.run([&]() -> awaitable<void> {
    ListOptions o;
    o.resource_version = "5";
    o.resource_version_match = "Exact";
    auto res = co_await f.client.list_all(kConfigMaps, o);
    REQUIRE_FALSE(res.ok());
    CHECK(res.error().is(Errc::gone));
  }());
  CHECK(f.server.requests() == 1);
}

TEST_CASE("writes use the right verb, content type and query", "[rest]") {
  Fixture f([](const FakeApiServer::Request& r) {
    if (r.method == http::verb::post) return FakeApiServer::Reply::json(201, r.body);
    if (r.method == http::verb::delete_) {
      return FakeApiServer::Reply::json(r.target.ends_with("/slow") ? 202 : 200, "{}");
    }
    return FakeApiServer::Reply::json(200, r.body.empty() ? "{}" : "{\"ok\":true}");
  });
  f.run([&]() -> awaitable<void> {
    auto created = co_await f.client.create(kConfigMaps, R"({"metadata":{"name":"a"}})");
    REQUIRE(created.ok());
    CHECK(created->status == 201);
    CHECK(std::string((*created->body)["metadata"]["name"].GetString()) == "a");

    rapidjson::Document obj = parse(R"({"metadata":{"name":"a","resourceVersion":"3"}})");
    // Never co_await inside a Catch2 macro: GCC 12 may evaluate it twice.
    auto updated = co_await f.client.update(kConfigMaps.named("a"), obj);
    REQUIRE(updated.ok());
    auto applied = co_await f.client.apply(kConfigMaps.named("a"), R"({"apiVersion":"v1"})",
                                           "appservice-operator");
    REQUIRE(applied.ok());
    auto merged =
        co_await f.client.patch(kConfigMaps.named("a"), PatchType::merge, R"({"data":{}})");
    REQUIRE(merged.ok());
    auto patched = co_await f.client.patch(
        kConfigMaps.named("a"), PatchType::json,
        R"([{"op":"test","path":"/metadata/resourceVersion","value":"3"}])");
    REQUIRE(patched.ok());
    kube::DeleteOptions del;
    del.propagation_policy = "Foreground";
    del.precondition_uid = "u-1";
    del.precondition_resource_version = "3";
    auto deleted = co_await f.client.delete_(kConfigMaps.named("a"), del);
    REQUIRE(deleted.ok());
    CHECK(deleted->status == 200);
    auto accepted = co_await f.client.delete_(kConfigMaps.named("slow"));
    REQUIRE(accepted.ok());
    CHECK(accepted->status == 202);
  }());
  const auto& seen = f.server.seen();
  REQUIRE(seen.size() == 7);
  CHECK(seen[0].method == http::verb::post);
  CHECK(seen[0].target == "/api/v1/namespaces/ns/configmaps");
  CHECK(seen[0].content_type == "application/json");
  CHECK(seen[1].method == http::verb::put);
  CHECK(seen[1].target == "/api/v1/namespaces/ns/configmaps/a");
  CHECK(parse(seen[1].body) == parse(R"({"metadata":{"name":"a","resourceVersion":"3"}})"));
  CHECK(seen[2].method == http::verb::patch);
  CHECK(seen[2].content_type == "application/apply-patch+yaml");
  CHECK(seen[2].target ==
        "/api/v1/namespaces/ns/configmaps/a?fieldManager=appservice-operator&force=true");
  CHECK(seen[3].content_type == "application/merge-patch+json");
  CHECK(seen[3].target == "/api/v1/namespaces/ns/configmaps/a");
  CHECK(seen[4].content_type == "application/json-patch+json");
  CHECK(seen[5].method == http::verb::delete_);
  CHECK(parse(seen[5].body) ==
        parse(R"({"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Foreground",
                  "preconditions":{"uid":"u-1","resourceVersion":"3"}})"));
  CHECK(parse(seen[6].body) == parse(R"({"kind":"DeleteOptions","apiVersion":"v1"})"));
}

TEST_CASE("apply_create: an unforced apply whose resourceVersion no object has, no other body",
          "[rest]") {
  Fixture f([](const FakeApiServer::Request& r) {
    if (r.target.find("/taken?") != std::string::npos) {
      return FakeApiServer::Reply::json(
          409, R"({"kind":"Status","status":"Failure","reason":"Conflict","code":409})");
    }
    return FakeApiServer::Reply::json(201, r.body);
  });
  f.run([&]() -> awaitable<void> {
    // A resourceVersion the caller left in (read from somewhere) is replaced, not sent.
    rapidjson::Document obj =
        parse(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a",)"
              R"("resourceVersion":"7","labels":{"x":"y"}},"data":{"k":"v"}})");
    auto created = co_await f.client.apply_create(kConfigMaps.named("a"), obj, "mgr");
    REQUIRE(created.ok());
    CHECK(created->status == 201);
    rapidjson::Document taken = parse(R"({"apiVersion":"v1","metadata":{"name":"taken"}})");
    auto refused = co_await f.client.apply_create(kConfigMaps.named("taken"), taken, "mgr");
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().is(Errc::conflict));
    // A body that is not an object with metadata is refused here, not sent.
    for (const char* bad : {"[1]", R"({"metadata":7})", "{"}) {
      auto not_sent = co_await f.client.apply_create(kConfigMaps.named("b"), bad, "mgr");
      REQUIRE_FALSE(not_sent.ok());
      CHECK(not_sent.error().is(Errc::bad_request));
    }
  }());
  const auto& seen = f.server.seen();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].method == http::verb::patch);
  CHECK(seen[0].content_type == "application/apply-patch+yaml");
  CHECK(seen[0].target == "/api/v1/namespaces/ns/configmaps/a?fieldManager=mgr");
  CHECK(parse(seen[0].body) ==
        parse(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a",)"
              R"("labels":{"x":"y"},"resourceVersion":"18446744073709551615"},"data":{"k":"v"}})"));
  CHECK(RestClient::kNoObjectResourceVersion == "18446744073709551615");
}

TEST_CASE("a 2xx body that is not JSON is an error, an empty body is a Null document", "[rest]") {
  Fixture f([](const FakeApiServer::Request& r) {
    return FakeApiServer::Reply::json(200, r.target.ends_with("/empty") ? "" : "not json");
  });
  f.run([&]() -> awaitable<void> {
    auto bad = co_await f.client.get(kConfigMaps.named("bad"));
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().is(Errc::unknown));
    CHECK_THAT(bad.error().message, Catch::Contains("not JSON"));
    auto empty = co_await f.client.get(kConfigMaps.named("empty"));
    REQUIRE(empty.ok());
    REQUIRE(empty->body);
    CHECK(empty->body->IsNull());
  }());
}

// A reconcile's deadline (--reconcile-timeout) carried by with_deadline: controller-runtime's
// Reconcile context, whose deadline cancels the requests made with it.
TEST_CASE("a client with a deadline cuts the request in flight there and sends none after it",
          "[rest][deadline]") {
  Fixture f([&](const FakeApiServer::Request& r) {
    if (r.target.ends_with("/slow"))
      return FakeApiServer::Reply::of(FakeApiServer::Reply::Kind::hang);
    return FakeApiServer::Reply::json(200, R"({"metadata":{"name":"fast"}})");
  });
  f.run([&]() -> awaitable<void> {
    const auto start = std::chrono::steady_clock::now();
    RestClient bounded = f.client.with_deadline(start + std::chrono::milliseconds(300));
    auto fast = co_await bounded.get(kConfigMaps.named("fast"));
    CHECK(fast.ok());  // well before the deadline: as without one
    auto slow = co_await bounded.get(kConfigMaps.named("slow"));
    const auto took = std::chrono::steady_clock::now() - start;
    REQUIRE_FALSE(slow.ok());
    CHECK(slow.error().is(Errc::timeout));
    CHECK(slow.error().describe().find("deadline exceeded") != std::string::npos);
    // Cut at the deadline, not at the transport's 60 s request timeout.
    CHECK(took >= std::chrono::milliseconds(300));
    CHECK(took < std::chrono::seconds(5));
    const int sent = f.server.requests();
    auto late = co_await bounded.get(kConfigMaps.named("fast"));
    REQUIRE_FALSE(late.ok());
    CHECK(late.error().is(Errc::timeout));
    CHECK(f.server.requests() == sent);  // nothing sent past the deadline
    // The client it came from has no deadline.
    auto unbounded = co_await f.client.get(kConfigMaps.named("fast"));
    CHECK(unbounded.ok());
  }());
}

TEST_CASE("a Retry-After wait that would end past the deadline is not started",
          "[rest][deadline]") {
  Fixture f([&](const FakeApiServer::Request&) { return too_many_requests("5"); });
  f.run([&]() -> awaitable<void> {
    const auto start = std::chrono::steady_clock::now();
    RestClient bounded = f.client.with_deadline(start + std::chrono::seconds(2));
    auto got = co_await bounded.get(kConfigMaps.named("busy"));
    REQUIRE_FALSE(got.ok());
    CHECK(got.error().is(Errc::too_many_requests));
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  }());
  CHECK(f.server.requests() == 1);
}
