// SPDX-License-Identifier: Apache-2.0
#include "ctrl/serve/request_authorizer.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <catch2/catch.hpp>
#include <map>
#include <optional>
#include <string>

#include "ctrl/base/clock.h"
#include "support/async_test.h"

namespace asio = boost::asio;
using asio::awaitable;
using ctrl::RequestAuthorizer;
using Verdict = RequestAuthorizer::Verdict;
using kube::testing::run_async;
using namespace std::chrono_literals;

// No co_await inside CHECK here: with GCC 12 the awaited call ran more than once per CHECK (seen:
// three reviews for one request), which would corrupt the review counts under test.
namespace {

// Tokens "alice" and "bob" are users; alice may get /metrics, bob may not. "broken" makes the
// review fail. With `gate` set, every review waits for it to be cancelled.
class FakeReviewer : public ctrl::AccessReviewer {
 public:
  awaitable<ctrl::TokenReviewResult> review_token(std::string token) override {
    ++token_reviews;
    co_await wait();
    ctrl::TokenReviewResult r;
    if (token == "broken") {
      r.error = "TokenReview: ServiceUnavailable (503)";
    } else if (token == "alice" || token == "bob") {
      r.authenticated = true;
      r.user.username = token;
      r.user.groups = {"system:authenticated"};
    }
    co_return r;
  }
  awaitable<ctrl::AccessReviewResult> review_access(ctrl::UserInfo user, std::string path,
                                                    std::string verb) override {
    ++access_reviews;
    co_await wait();
    ctrl::AccessReviewResult r;
    r.allowed = user.username == "alice" && path == "/metrics" && verb == "get";
    co_return r;
  }

  awaitable<void> wait() {
    if (!gate) co_return;
    co_await gate->async_wait(asio::as_tuple(asio::use_awaitable));
  }

  int token_reviews = 0;
  int access_reviews = 0;
  std::optional<asio::steady_timer> gate;
};

struct Fixture {
  asio::io_context io;
  ctrl::FakeClock clock;
  FakeReviewer reviewer;
  ctrl::MetricsRegistry metrics;
  RequestAuthorizer authorizer{reviewer, clock, RequestAuthorizer::Options{}, &metrics};

  awaitable<Verdict> get(std::string authorization) {
    co_return co_await authorizer.authorize(std::move(authorization), "/metrics", "get");
  }
};

}  // namespace

TEST_CASE("bearer tokens are read as the API server reads them", "[metricsauth]") {
  CHECK(ctrl::bearer_token("Bearer abc") == "abc");
  CHECK(ctrl::bearer_token("bearer abc") == "abc");
  CHECK(ctrl::bearer_token("  BEARER   abc  ") == "abc");
  CHECK(ctrl::bearer_token("").empty());
  CHECK(ctrl::bearer_token("Bearer").empty());
  CHECK(ctrl::bearer_token("Bearer ").empty());
  CHECK(ctrl::bearer_token("Basic YWxhZGRpbjpvcGVu").empty());
  CHECK(ctrl::bearer_token("Bearer a b").empty());
}

TEST_CASE("no token is 401 without a review, a bad one 401 after one review, cached a minute",
          "[metricsauth]") {
  Fixture f;
  run_async(f.io, [&]() -> awaitable<void> {
    {
      const auto v = co_await f.get("");
      CHECK(v == Verdict::unauthenticated);
    }
    {
      const auto v = co_await f.get("Basic xyz");
      CHECK(v == Verdict::unauthenticated);
    }
    CHECK(f.reviewer.token_reviews == 0);
    {
      const auto v = co_await f.get("Bearer nobody");
      CHECK(v == Verdict::unauthenticated);
    }
    {
      const auto v = co_await f.get("Bearer nobody");
      CHECK(v == Verdict::unauthenticated);
    }
    CHECK(f.reviewer.token_reviews == 1);
    f.clock.step(61s);
    {
      const auto v = co_await f.get("Bearer nobody");
      CHECK(v == Verdict::unauthenticated);
    }
    CHECK(f.reviewer.token_reviews == 2);
    CHECK(f.reviewer.access_reviews == 0);
  }());
  CHECK(f.metrics.render().find(
            "metrics_auth_reviews_total{result=\"unauthenticated\",review=\"TokenReview\"} 2") !=
        std::string::npos);
}

TEST_CASE("an allowed user is cached 5 minutes, a denied one 30 seconds", "[metricsauth]") {
  Fixture f;
  run_async(f.io, [&]() -> awaitable<void> {
    {
      const auto v = co_await f.get("Bearer alice");
      CHECK(v == Verdict::allowed);
    }
    {
      const auto v = co_await f.get("Bearer bob");
      CHECK(v == Verdict::forbidden);
    }
    CHECK(f.reviewer.token_reviews == 2);
    CHECK(f.reviewer.access_reviews == 2);
    f.clock.step(29s);
    {
      const auto v = co_await f.get("Bearer alice");
      CHECK(v == Verdict::allowed);
    }
    {
      const auto v = co_await f.get("Bearer bob");
      CHECK(v == Verdict::forbidden);
    }
    CHECK(f.reviewer.access_reviews == 2);  // both cached
    f.clock.step(2s);                       // 31 s: bob's denial expired, alice's allow not
    {
      const auto v = co_await f.get("Bearer alice");
      CHECK(v == Verdict::allowed);
    }
    {
      const auto v = co_await f.get("Bearer bob");
      CHECK(v == Verdict::forbidden);
    }
    CHECK(f.reviewer.access_reviews == 3);
    f.clock.step(4min + 30s);  // 5 min 1 s after alice's review; tokens reviewed again too
    {
      const auto v = co_await f.get("Bearer alice");
      CHECK(v == Verdict::allowed);
    }
    CHECK(f.reviewer.access_reviews == 4);
    // Another verb is another decision.
    const auto head = co_await f.authorizer.authorize("Bearer alice", "/metrics", "head");
    CHECK(head == Verdict::forbidden);
  }());
}

TEST_CASE("a failed review is an error, not cached", "[metricsauth]") {
  Fixture f;
  run_async(f.io, [&]() -> awaitable<void> {
    for (int i = 0; i < 2; ++i) {
      const auto v = co_await f.get("Bearer broken");
      CHECK(v == Verdict::error);
    }
    CHECK(f.reviewer.token_reviews == 2);
  }());
}

TEST_CASE("reviews in flight are capped: past the cap a request is busy at once", "[metricsauth]") {
  Fixture f;
  f.reviewer.gate.emplace(f.io, asio::steady_timer::time_point::max());
  std::map<int, Verdict> verdicts;
  run_async(f.io, [&]() -> awaitable<void> {
    // Five distinct tokens at once, a cap of four: four wait on the API server, the fifth is
    // answered at once without a review.
    for (int i = 0; i < 5; ++i) {
      asio::co_spawn(
          f.io,
          [&, i]() -> awaitable<void> {
            verdicts[i] = co_await f.get("Bearer flood" + std::to_string(i));
          },
          asio::detached);
    }
    asio::steady_timer t(f.io);
    for (int spins = 0; spins < 100 && verdicts.size() < 1; ++spins) {
      t.expires_after(1ms);
      co_await t.async_wait(asio::use_awaitable);
    }
    CHECK(f.authorizer.in_flight() == 4);
    CHECK(f.reviewer.token_reviews == 4);
    REQUIRE(verdicts.size() == 1);
    CHECK(verdicts.begin()->second == Verdict::busy);
    f.reviewer.gate->cancel();
    for (int spins = 0; spins < 100 && verdicts.size() < 5; ++spins) {
      t.expires_after(1ms);
      co_await t.async_wait(asio::use_awaitable);
    }
    CHECK(verdicts.size() == 5);
    CHECK(f.authorizer.in_flight() == 0);
  }());
}
