// SPDX-License-Identifier: Apache-2.0
// Leader election against a real kube-apiserver (test/controlplane/up.sh): electors with their own
// clients, as separate processes would have, competing for one Lease in a fresh namespace.
// Takeover times are printed so the closing note of issue 4 can quote them.

#include <rapidjson/document.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <exception>
#include <functional>
#include <iostream>
#include <memory>

#include "ctrl/base/clock.h"
#include "ctrl/leader/leader_election_record.h"
#include "ctrl/leader/leader_elector.h"
#include "ctrl/metrics/metrics_registry.h"
#include "e2e_support.h"
#include "kube/api/rest_client.h"
#include "support/async_test.h"

namespace asio = boost::asio;
using asio::awaitable;
using ctrl::LeaderElector;
using kube::ResourcePath;
using kube::RestClient;
using kube::testing::run_async;
using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

namespace {

const auto kLeases = ResourcePath::from_api_version("coordination.k8s.io/v1", "leases");
constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);

// The request timeout stays below the renew deadline, as a manager would configure it.
std::shared_ptr<RestClient> client_for(asio::io_context& io) {
  return e2e::client_for(io, e2e::kubeconfig_path(), 5s);
}

// Waits on the loop until `done()` or the deadline; whether `done()` held.
awaitable<bool> wait_for(std::function<bool()> done, std::chrono::milliseconds limit) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  const auto deadline = SteadyClock::now() + limit;
  while (!done()) {
    if (SteadyClock::now() >= deadline) co_return false;
    timer.expires_after(20ms);
    co_await timer.async_wait(kAwait);
  }
  co_return true;
}

double seconds(SteadyClock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// One candidate: its own client, metrics and run() coroutine, like one operator process.
struct Candidate {
  Candidate(asio::io_context& io, const std::string& ns, const std::string& lease,
            const std::string& identity, ctrl::Random& random)
      : client(client_for(io)) {
    LeaderElector::Options o;
    o.lease_namespace = ns;
    o.lease_name = lease;
    o.identity = identity;
    elector =
        std::make_unique<LeaderElector>(io.get_executor(), client, o, clock, random, &registry);
    elector->on_started_leading([this] { ++started; });
    elector->on_stopped_leading([this] { ++stopped; });
  }

  void start(asio::io_context& io) {
    asio::co_spawn(io, elector->run(), [this](std::exception_ptr e) {
      run_error = e;
      finished = true;
    });
  }

  bool leading() const { return elector->is_leader(); }
  double gauge() const {
    const std::string text = registry.render();
    const std::string series = "leader_election_master_status{name=\"";
    const auto at = text.find(series);
    if (at == std::string::npos) return -1;
    const auto value = text.find("} ", at);
    return std::stod(text.substr(value + 2));
  }

  ctrl::RealClock clock;
  ctrl::MetricsRegistry registry;
  std::shared_ptr<RestClient> client;
  std::unique_ptr<LeaderElector> elector;
  int started = 0;
  int stopped = 0;
  bool finished = false;
  std::exception_ptr run_error;
};

awaitable<ctrl::LeaderElectionRecord> read_lease(RestClient& client, const ResourcePath& lease) {
  auto got = co_await client.get(lease);
  REQUIRE(got.ok());
  co_return ctrl::LeaderElectionRecord::from_lease(*got->body);
}

}  // namespace

TEST_CASE("two electors: one leads, release hands over in a retry period, a crash in a lease",
          "[e2e][leader]") {
  asio::io_context io;
  auto admin = client_for(io);
  ctrl::SeededRandom random;
  const std::string ns = e2e::unique_name("le-e2e");
  const std::string lease_name = "appservice-operator-lock";
  const auto lease = kLeases.in_namespace(ns).named(lease_name);
  const ctrl::LeaderElectionConfig config;  // client-go's 15 s / 10 s / 2 s

  Candidate a(io, ns, lease_name, "candidate-a", random);
  Candidate b(io, ns, lease_name, "candidate-b", random);
  Candidate c(io, ns, lease_name, "candidate-c", random);
  run_async(
      io,
      e2e::in_namespace(
          *admin, ns,
          [&](std::string) -> awaitable<void> {
            // Both start at once on a missing Lease: one creates it, the other gets 409 and waits.
            a.start(io);
            b.start(io);
            REQUIRE(co_await wait_for([&] { return a.leading() || b.leading(); }, 10s));
            Candidate& leader = a.leading() ? a : b;
            Candidate& standby = a.leading() ? b : a;
            // Exactly one, over several retry periods.
            int samples = 0;
            bool both = false;
            co_await wait_for(
                [&] {
                  ++samples;
                  both = both || (a.leading() && b.leading());
                  return !leader.leading();  // ends early only if leadership flaps
                },
                3 * config.retry_period + 500ms);
            CHECK_FALSE(both);
            CHECK(samples > 100);
            CHECK(leader.leading());
            CHECK_FALSE(standby.leading());
            CHECK(leader.started == 1);
            CHECK(standby.started == 0);
            CHECK(leader.gauge() == 1);
            CHECK(standby.gauge() == 0);
            auto first = co_await read_lease(*admin, lease);
            CHECK(first.holder_identity == leader.elector->identity());
            CHECK(first.lease_duration == 15s);
            CHECK(first.lease_transitions == 0);
            REQUIRE(first.renew_time.has_value());
            CHECK(first.acquire_time <= first.renew_time);

            // Graceful shutdown of the leader: empty holder, the standby takes over at its next
            // try.
            const auto release_start = SteadyClock::now();
            const bool released = co_await leader.elector->release();
            CHECK(released);
            CHECK_FALSE(leader.leading());
            CHECK(leader.gauge() == 0);
            const auto max_retry_wait = std::chrono::duration_cast<std::chrono::milliseconds>(
                config.retry_period * (1 + config.jitter_factor));
            // Unreleased, the lease (renewed at most a retry period before release_start) could
            // not be taken before lease_duration - retry_period: a takeover sooner proves the
            // release. How much sooner (the standby's next retry) depends on the machine's load:
            // printed, not asserted.
            const auto unreleased_earliest = std::chrono::duration_cast<std::chrono::milliseconds>(
                config.lease_duration - config.retry_period);
            REQUIRE(co_await wait_for([&] { return standby.leading(); }, unreleased_earliest));
            const auto release_takeover = SteadyClock::now() - release_start;
            std::cout << "leader election e2e: takeover after release: "
                      << seconds(release_takeover) << " s (retry period "
                      << seconds(config.retry_period) << " s, jitter " << config.jitter_factor
                      << ")\n";
            CHECK(release_takeover < unreleased_earliest);
            REQUIRE(co_await wait_for([&] { return leader.finished; }, 5s));
            CHECK(leader.stopped == 0);  // a release is not a loss
            auto second = co_await read_lease(*admin, lease);
            CHECK(second.holder_identity == standby.elector->identity());
            CHECK(second.lease_transitions == 1);

            // A third candidate joins; then the new leader crashes (stops renewing, no release).
            // The lease must not be taken before it can have expired, and must be taken soon after.
            c.start(io);
            co_await wait_for([] { return false; },
                              2 * config.retry_period);  // c sees a live lease
            CHECK_FALSE(c.leading());
            const auto crash = SteadyClock::now();
            standby.elector->stop();
            REQUIRE(co_await wait_for([&] { return standby.finished; }, 10s));
            CHECK_FALSE(standby.leading());
            // c may first have seen the final renew up to one (jittered) retry after it was
            // written, and then tries every retry period: bounds from client-go's algorithm.
            const auto latest = config.lease_duration + 2 * max_retry_wait + 3s;
            REQUIRE(
                co_await wait_for([&] { return c.leading(); },
                                  std::chrono::duration_cast<std::chrono::milliseconds>(latest)));
            const auto crash_takeover = SteadyClock::now() - crash;
            std::cout << "leader election e2e: takeover after a crash: " << seconds(crash_takeover)
                      << " s (lease duration " << config.lease_duration.count() << " s)\n";
            CHECK(crash_takeover >= config.lease_duration - config.retry_period);
            auto third = co_await read_lease(*admin, lease);
            CHECK(third.holder_identity == "candidate-c");
            CHECK(third.lease_transitions == 2);
            CHECK(c.started == 1);
            CHECK(c.gauge() == 1);

            c.elector->stop();
            REQUIRE(co_await wait_for([&] { return c.finished; }, 10s));
          }),
      [&] {
        a.elector->stop();
        b.elector->stop();
        c.elector->stop();
      },
      90s);
  for (const auto* cand : {&a, &b, &c}) {
    if (cand->run_error) std::rethrow_exception(cand->run_error);
  }
}

TEST_CASE("a leader whose Lease is taken by someone else stops at once", "[e2e][leader]") {
  asio::io_context io;
  auto admin = client_for(io);
  ctrl::SeededRandom random;
  const std::string ns = e2e::unique_name("le-e2e");
  const std::string lease_name = "lock";
  const auto lease = kLeases.in_namespace(ns).named(lease_name);
  Candidate a(io, ns, lease_name, "candidate-a", random);
  run_async(
      io,
      e2e::in_namespace(
          *admin, ns,
          [&](std::string) -> awaitable<void> {
            a.start(io);
            REQUIRE(co_await wait_for([&] { return a.leading(); }, 10s));

            // An intruder overwrites the holder (as a candidate that judged the lease
            // expired would).
            auto got = co_await admin->get(lease);
            REQUIRE(got.ok());
            auto record = ctrl::LeaderElectionRecord::from_lease(*got->body);
            record.holder_identity = "intruder";
            record.lease_transitions += 1;
            rapidjson::Document doc;
            doc.CopyFrom(*got->body, doc.GetAllocator());
            record.to_lease(doc, doc.GetAllocator());
            auto put = co_await admin->update(lease, kube::JsonBody(doc));
            REQUIRE(put.ok());
            const auto intruded = SteadyClock::now();

            REQUIRE(co_await wait_for([&] { return a.stopped == 1; }, 5s));
            std::cout << "leader election e2e: leader noticed the lost lease after "
                      << seconds(SteadyClock::now() - intruded) << " s\n";
            CHECK_FALSE(a.leading());
            CHECK(a.gauge() == 0);
            REQUIRE(co_await wait_for([&] { return a.finished; }, 5s));
            // It wrote nothing after losing: the intruder still holds the lease.
            auto after = co_await admin->get(lease);
            REQUIRE(after.ok());
            CHECK(ctrl::LeaderElectionRecord::from_lease(*after->body).holder_identity ==
                  "intruder");
            // release() leaves someone else's lease alone.
            CHECK(co_await a.elector->release());
            auto still = co_await admin->get(lease);
            REQUIRE(still.ok());
            CHECK(ctrl::LeaderElectionRecord::from_lease(*still->body).holder_identity ==
                  "intruder");
          }),
      [&] { a.elector->stop(); }, 30s);
  if (a.run_error) std::rethrow_exception(a.run_error);
}
