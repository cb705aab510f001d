// SPDX-License-Identifier: Apache-2.0
#include "ctrl/queue/work_queue.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <vector>

using namespace std::chrono_literals;

namespace {

// A queue on a fake clock with the default controller rate limiter and its own registry.
struct Fixture {
  ctrl::FakeClock clock;
  ctrl::MetricsRegistry metrics;
  ctrl::WorkQueue queue{"test", clock, ctrl::default_controller_rate_limiter(clock), metrics};
  int notified = 0;

  Fixture() {
    queue.set_notify([this] { ++notified; });
  }

  // Everything get() hands out right now, each marked done at once.
  std::vector<std::string> drain_ready() {
    std::vector<std::string> keys;
    while (auto key = queue.get()) {
      keys.push_back(*key);
      queue.done(*key);
    }
    return keys;
  }

  // The value of a series of this queue in the rendered text (workqueue_depth: at priority 0).
  double metric(const std::string& name, const std::string& priority = "0") {
    const std::string text = metrics.render();
    const std::string prefix =
        name + "{controller=\"test\",name=\"test\"" +
        (name == "workqueue_depth" ? ",priority=\"" + priority + "\"" : std::string()) + "} ";
    const auto pos = text.find(prefix);
    REQUIRE(pos != std::string::npos);
    return std::stod(text.substr(pos + prefix.size()));
  }
};

using Keys = std::vector<std::string>;

}  // namespace

TEST_CASE("queue is FIFO and deduplicates keys that are waiting", "[workqueue]") {
  Fixture f;
  f.queue.add("ns/a");
  f.queue.add("ns/b");
  f.queue.add("ns/a");
  f.queue.add("ns/c");
  f.queue.add("ns/b");
  CHECK(f.queue.len() == 3);
  CHECK(f.notified == 3);  // once per key that became available, not per add
  CHECK(f.drain_ready() == Keys{"ns/a", "ns/b", "ns/c"});
  CHECK_FALSE(f.queue.get());
}

TEST_CASE("a key added while processing is handed out again only after done, once", "[workqueue]") {
  Fixture f;
  f.queue.add("ns/a");
  f.queue.add("ns/b");
  REQUIRE(f.queue.get() == std::optional<std::string>("ns/a"));

  // Added twice while in flight: marked dirty, not queued, so no second worker can take it.
  f.queue.add("ns/a");
  f.queue.add("ns/a");
  CHECK(f.queue.len() == 1);
  CHECK(f.queue.processing() == 1);
  REQUIRE(f.queue.get() == std::optional<std::string>("ns/b"));
  CHECK_FALSE(f.queue.get());

  const int before = f.notified;
  f.queue.done("ns/a");
  CHECK(f.notified == before + 1);  // it is available again
  CHECK(f.queue.len() == 1);
  f.queue.done("ns/b");
  CHECK(f.drain_ready() == Keys{"ns/a"});  // exactly once
  CHECK(f.queue.len() == 0);
}

TEST_CASE("done without a re-add leaves the key out of the queue", "[workqueue]") {
  Fixture f;
  f.queue.add("ns/a");
  REQUIRE(f.queue.get());
  f.queue.done("ns/a");
  CHECK(f.queue.len() == 0);
  CHECK(f.queue.processing() == 0);
  // And it can be added again as a fresh key.
  f.queue.add("ns/a");
  CHECK(f.drain_ready() == Keys{"ns/a"});
}

TEST_CASE("add_after releases keys in ready-time order as the clock passes", "[workqueue]") {
  Fixture f;
  const auto t0 = f.clock.now();
  f.queue.add_after("ns/late", 2s);
  f.queue.add_after("ns/early", 1s);
  f.queue.add_after("ns/also-late", 2s);  // same time as ns/late: first in, first out
  CHECK(f.queue.waiting() == 3);
  CHECK(f.queue.len() == 0);
  CHECK(f.queue.next_ready_time() == std::optional(t0 + 1s));

  f.clock.step(999ms);
  CHECK(f.queue.advance() == 0);
  CHECK_FALSE(f.queue.get());

  f.clock.step(1ms);
  CHECK(f.queue.advance() == 1);
  CHECK(f.drain_ready() == Keys{"ns/early"});
  CHECK(f.queue.next_ready_time() == std::optional(t0 + 2s));

  f.clock.step(5s);  // long past both: they come out together, in order
  CHECK(f.queue.advance() == 2);
  CHECK(f.drain_ready() == Keys{"ns/late", "ns/also-late"});
  CHECK_FALSE(f.queue.next_ready_time());
  CHECK(f.queue.waiting() == 0);
}

TEST_CASE("add_after keeps the earliest ready time for a key", "[workqueue]") {
  Fixture f;
  const auto t0 = f.clock.now();
  f.queue.add_after("ns/a", 5s);
  int before = f.notified;
  f.queue.add_after("ns/a", 1s);  // earlier: replaces, and the loop's timer must move
  CHECK(f.notified == before + 1);
  before = f.notified;
  f.queue.add_after("ns/a", 10s);  // later: ignored
  CHECK(f.notified == before);
  CHECK(f.queue.waiting() == 1);
  CHECK(f.queue.next_ready_time() == std::optional(t0 + 1s));

  f.clock.step(1s);
  CHECK(f.queue.advance() == 1);
  CHECK(f.drain_ready() == Keys{"ns/a"});
  f.clock.step(10s);
  CHECK(f.queue.advance() == 0);  // the replaced entries are gone
  CHECK_FALSE(f.queue.get());
}

TEST_CASE("add_after with no delay adds at once, and delayed keys still dedup", "[workqueue]") {
  Fixture f;
  f.queue.add_after("ns/a", 0s);
  f.queue.add_after("ns/b", -1s);
  CHECK(f.queue.len() == 2);
  CHECK(f.queue.waiting() == 0);

  f.queue.add_after("ns/a", 1s);  // also already queued: releasing it must not duplicate it
  f.clock.step(1s);
  CHECK(f.queue.advance() == 1);
  CHECK(f.drain_ready() == Keys{"ns/a", "ns/b"});
}

TEST_CASE("add_rate_limited backs off per key and forget resets it", "[workqueue]") {
  Fixture f;
  const auto t0 = f.clock.now();
  f.queue.add_rate_limited("ns/a");
  CHECK(f.queue.num_requeues("ns/a") == 1);
  CHECK(f.queue.next_ready_time() == std::optional(t0 + 5ms));
  f.clock.step(5ms);
  f.queue.advance();
  REQUIRE(f.queue.get() == std::optional<std::string>("ns/a"));
  f.queue.done("ns/a");

  f.queue.add_rate_limited("ns/a");
  CHECK(f.queue.num_requeues("ns/a") == 2);
  CHECK(f.queue.next_ready_time() == std::optional(t0 + 5ms + 10ms));
  f.clock.step(10ms);
  CHECK(f.queue.advance() == 1);
  CHECK(f.drain_ready() == Keys{"ns/a"});

  f.queue.forget("ns/a");
  CHECK(f.queue.num_requeues("ns/a") == 0);
  f.queue.add_rate_limited("ns/a");
  CHECK(f.queue.next_ready_time() == std::optional(f.clock.now() + 5ms));
}

TEST_CASE("shut_down refuses adds but hands out what is queued", "[workqueue]") {
  Fixture f;
  f.queue.add("ns/a");
  f.queue.add("ns/b");
  f.queue.add_after("ns/later", 1s);
  const int before = f.notified;
  f.queue.shut_down();
  CHECK(f.notified == before + 1);  // waiting consumers must wake to see the shutdown
  CHECK(f.queue.shutting_down());
  CHECK(f.queue.is_drained());             // a plain shutdown does not wait for anything
  CHECK_FALSE(f.queue.next_ready_time());  // delayed keys are dropped

  f.queue.add("ns/c");
  f.queue.add_after("ns/d", 1ms);
  f.queue.add_rate_limited("ns/e");
  CHECK(f.queue.num_requeues("ns/e") == 0);
  f.clock.step(2s);
  CHECK(f.queue.advance() == 0);
  CHECK(f.drain_ready() == Keys{"ns/a", "ns/b"});
  CHECK_FALSE(f.queue.get());
}

TEST_CASE("shut_down_with_drain is drained once nothing is queued or processing", "[workqueue]") {
  Fixture f;
  f.queue.add("ns/a");
  f.queue.add("ns/b");
  REQUIRE(f.queue.get() == std::optional<std::string>("ns/a"));
  f.queue.add("ns/a");  // dirty before shutdown: still re-queued on done, as in client-go

  f.queue.shut_down_with_drain();
  CHECK(f.queue.shutting_down());
  CHECK_FALSE(f.queue.is_drained());

  f.queue.done("ns/a");
  CHECK(f.queue.len() == 2);
  REQUIRE(f.queue.get() == std::optional<std::string>("ns/b"));
  REQUIRE(f.queue.get() == std::optional<std::string>("ns/a"));
  f.queue.done("ns/b");
  CHECK_FALSE(f.queue.is_drained());  // ns/a is still in flight

  const int before = f.notified;
  f.queue.done("ns/a");
  CHECK(f.queue.is_drained());
  CHECK(f.notified == before + 1);  // the manager waiting for the drain is woken
}

TEST_CASE("a plain shut_down ends a drain in progress", "[workqueue]") {
  Fixture f;
  f.queue.add("ns/a");
  REQUIRE(f.queue.get());
  f.queue.shut_down_with_drain();
  CHECK_FALSE(f.queue.is_drained());
  f.queue.shut_down();
  CHECK(f.queue.is_drained());
  f.queue.done("ns/a");
  CHECK(f.queue.processing() == 0);
}

TEST_CASE("not shutting down is never drained", "[workqueue]") {
  Fixture f;
  CHECK_FALSE(f.queue.shutting_down());
  CHECK_FALSE(f.queue.is_drained());
}

TEST_CASE("queue metrics follow adds, waits, work and retries", "[workqueue]") {
  Fixture f;
  f.queue.add("ns/a");
  f.queue.add("ns/a");  // deduplicated: not an add
  f.queue.add("ns/b");
  CHECK(f.metric("workqueue_depth") == 2);
  CHECK(f.metric("workqueue_adds_total") == 2);

  f.clock.step(2s);
  REQUIRE(f.queue.get() == std::optional<std::string>("ns/a"));
  CHECK(f.metric("workqueue_depth") == 1);
  CHECK(f.metric("workqueue_queue_duration_seconds_sum") == 2);
  CHECK(f.metric("workqueue_queue_duration_seconds_count") == 1);

  f.clock.step(3s);
  REQUIRE(f.queue.get() == std::optional<std::string>("ns/b"));
  f.clock.step(1s);
  // ns/a has run 4 s, ns/b 1 s.
  CHECK(f.metric("workqueue_unfinished_work_seconds") == 5);
  CHECK(f.metric("workqueue_longest_running_processor_seconds") == 4);

  f.queue.done("ns/a");
  CHECK(f.metric("workqueue_work_duration_seconds_sum") == 4);
  CHECK(f.metric("workqueue_unfinished_work_seconds") == 1);
  f.queue.done("ns/b");
  CHECK(f.metric("workqueue_work_duration_seconds_count") == 2);
  CHECK(f.metric("workqueue_longest_running_processor_seconds") == 0);

  // Every add_after counts as a retry, including rate-limited ones, as in client-go.
  f.queue.add_after("ns/c", 1s);
  f.queue.add_rate_limited("ns/d");
  CHECK(f.metric("workqueue_retries_total") == 2);

  // Histograms use the workqueue bucket layout, and the labels carry the queue name.
  const std::string text = f.metrics.render();
  CHECK(text.find("workqueue_queue_duration_seconds_bucket{controller=\"test\",name=\"test\","
                  "le=\"1e-08\"} 0\n") != std::string::npos);
  CHECK(text.find("workqueue_queue_duration_seconds_bucket{controller=\"test\",name=\"test\","
                  "le=\"10\"} 2\n") != std::string::npos);
}

TEST_CASE("a destroyed queue stops reporting its in-flight gauges", "[workqueue]") {
  ctrl::FakeClock clock;
  ctrl::MetricsRegistry metrics;
  {
    ctrl::WorkQueue queue("short-lived", clock, ctrl::default_controller_rate_limiter(clock),
                          metrics);
    CHECK(metrics.render().find("workqueue_unfinished_work_seconds{") != std::string::npos);
  }
  CHECK(metrics.render().find("workqueue_unfinished_work_seconds{") == std::string::npos);
  // The name is free again.
  ctrl::WorkQueue again("short-lived", clock, ctrl::default_controller_rate_limiter(clock),
                        metrics);
  CHECK(again.name() == "short-lived");
}

TEST_CASE("priorities: higher first, first-in first-out within each", "[workqueue]") {
  Fixture f;
  f.queue.add("ns/low1", ctrl::kLowPriority);
  f.queue.add("ns/a");
  f.queue.add("ns/low2", ctrl::kLowPriority);
  f.queue.add("ns/high", 10);
  f.queue.add("ns/b");
  CHECK(f.queue.len() == 5);
  CHECK(f.drain_ready() == Keys{"ns/high", "ns/a", "ns/b", "ns/low1", "ns/low2"});
}

TEST_CASE("priorities: a key added again at a higher one moves to its end, at a lower stays",
          "[workqueue]") {
  Fixture f;
  for (auto key : {"ns/a", "ns/b", "ns/c"}) f.queue.add(key, ctrl::kLowPriority);
  f.queue.add("ns/x");
  f.queue.add("ns/c");  // raised from low to 0: behind ns/x, which was at 0 first
  f.queue.add("ns/x", ctrl::kLowPriority);  // lower: ns/x keeps 0 and its place
  CHECK(f.queue.len() == 4);
  CHECK(f.metric("workqueue_adds_total") == 4);  // a raise is not a second add
  auto first = f.queue.get_with_priority();
  REQUIRE(first);
  CHECK(first->key == "ns/x");
  CHECK(first->priority == 0);
  auto second = f.queue.get_with_priority();
  REQUIRE(second);
  CHECK(second->key == "ns/c");
  CHECK(second->priority == 0);
  f.queue.done("ns/x");
  f.queue.done("ns/c");
  CHECK(f.drain_ready() == Keys{"ns/a", "ns/b"});
}

TEST_CASE("priorities: a key re-added while processing returns at the higher priority, at done",
          "[workqueue]") {
  Fixture f;
  f.queue.add("ns/a", ctrl::kLowPriority);
  f.queue.add("ns/b", ctrl::kLowPriority);
  REQUIRE(f.queue.get() == std::optional<std::string>("ns/a"));
  f.queue.add("ns/a", ctrl::kLowPriority);
  f.queue.add("ns/a");        // raised while in flight
  CHECK(f.queue.len() == 1);  // still not queued: never two reconciles of one key
  f.queue.add("ns/c");
  f.queue.done("ns/a");
  // At done it joins the end of priority 0, behind ns/c, ahead of the low ns/b.
  CHECK(f.drain_ready() == Keys{"ns/c", "ns/a", "ns/b"});
}

TEST_CASE("priorities: a delayed key keeps the higher priority and the earlier time",
          "[workqueue]") {
  Fixture f;
  f.queue.add_after("ns/a", 2s, ctrl::kLowPriority);
  f.queue.add_after("ns/a", 5s, 3);  // later: the time stays 2 s, the priority becomes 3
  f.queue.add_after("ns/b", 1s, ctrl::kLowPriority);
  f.queue.add("ns/c");
  f.clock.step(2s);
  CHECK(f.queue.advance() == 2);
  auto first = f.queue.get_with_priority();
  REQUIRE(first);
  CHECK(first->key == "ns/a");
  CHECK(first->priority == 3);
  f.queue.done("ns/a");
  CHECK(f.drain_ready() == Keys{"ns/c", "ns/b"});
  // add_rate_limited carries the priority through the limiter's delay.
  f.queue.add_rate_limited("ns/d", ctrl::kLowPriority);
  f.queue.add("ns/e", ctrl::kLowPriority);
  f.clock.step(1s);
  f.queue.advance();
  auto d = f.queue.get_with_priority();
  REQUIRE(d);
  CHECK(d->key == "ns/e");  // ns/d became ready later, at the same low priority
  f.queue.done("ns/e");
  d = f.queue.get_with_priority();
  REQUIRE(d);
  CHECK(d->key == "ns/d");
  CHECK(d->priority == ctrl::kLowPriority);
}

TEST_CASE("priorities: workqueue_depth has a series per priority, capped in count", "[workqueue]") {
  Fixture f;
  CHECK(f.metric("workqueue_depth") == 0);  // shown before the first add
  f.queue.add("ns/a", ctrl::kLowPriority);
  f.queue.add("ns/b", ctrl::kLowPriority);
  f.queue.add("ns/c");
  CHECK(f.metric("workqueue_depth", "-100") == 2);
  CHECK(f.metric("workqueue_depth", "0") == 1);
  f.queue.add("ns/b");  // raised: moves between the series
  CHECK(f.metric("workqueue_depth", "-100") == 1);
  CHECK(f.metric("workqueue_depth", "0") == 2);
  f.drain_ready();
  CHECK(f.metric("workqueue_depth", "-100") == 0);
  CHECK(f.metric("workqueue_depth", "0") == 0);
  // As controller-runtime: past 25 distinct priorities, one placeholder series takes the rest.
  for (int p = 1; p <= 30; ++p) f.queue.add("ns/p" + std::to_string(p), p);
  CHECK(f.metric("workqueue_depth", "exceeded_cardinality_limit") == 7);
  CHECK(f.metrics.render().find("priority=\"29\"") == std::string::npos);
}
