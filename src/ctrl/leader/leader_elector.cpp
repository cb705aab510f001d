// SPDX-License-Identifier: Apache-2.0
#include "ctrl/leader/leader_elector.h"

#include <glog/logging.h>
#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <climits>
#include <utility>

#include "ctrl/leader/leader_election_record.h"

namespace ctrl {
namespace asio = boost::asio;
using asio::awaitable;
using Action = LeaderElectorState::Action;

namespace {

constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);

std::string hostname() {
  char buf[HOST_NAME_MAX + 1] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

}  // namespace

std::string LeaderElector::default_identity(Random& random) {
  // A version 4 UUID, as controller-runtime appends uuid.NewUUID().
  static constexpr char kHex[] = "0123456789abcdef";
  std::string uuid;
  for (int i = 0; i < 32; ++i) {
    if (i == 8 || i == 12 || i == 16 || i == 20) uuid += '-';
    int nibble = static_cast<int>(random.int_between(0, 15));
    if (i == 12) nibble = 4;                 // version
    if (i == 16) nibble = 8 | (nibble & 3);  // RFC 4122 variant
    uuid += kHex[nibble];
  }
  return hostname() + "_" + uuid;
}

LeaderElector::LeaderElector(asio::any_io_executor ex, std::shared_ptr<kube::RestClient> client,
                             Options options, const Clock& clock, Random& random,
                             MetricsRegistry* metrics)
    : ex_(std::move(ex)),
      client_(std::move(client)),
      options_(std::move(options)),
      clock_(clock),
      random_(random),
      collection_(kube::ResourcePath::from_api_version("coordination.k8s.io/v1", "leases")
                      .in_namespace(options_.lease_namespace)),
      lease_(collection_.named(options_.lease_name)),
      key_(options_.lease_namespace + "/" + options_.lease_name),
      state_(options_.identity.empty() ? default_identity(random) : options_.identity,
             options_.config),
      retry_timer_(ex_),
      deadline_timer_(ex_) {
  CHECK(client_ != nullptr);
  CHECK(!options_.lease_namespace.empty()) << "leader election needs a Lease namespace";
  CHECK(!options_.lease_name.empty()) << "leader election needs a Lease name";
  if (metrics != nullptr) {
    gauge_ = &metrics->gauge("leader_election_master_status",
                             "Gauge of if the reporting system is master of the relevant lease, 0 "
                             "indicates backup, 1 indicates master. 'name' is the string used to "
                             "identify the lease. Please make sure to group by name.",
                             {{"name", options_.lease_name}});
    gauge_->set(0);
  }
}

awaitable<void> LeaderElector::run() {
  CHECK(!started_) << "LeaderElector::run() is called once";
  started_ = true;
  LOG(INFO) << "attempting to acquire leader lease " << key_ << " as " << identity();
  using namespace asio::experimental::awaitable_operators;
  co_await (loop() && watch_renew_deadline());
}

awaitable<void> LeaderElector::loop() {
  while (!stopping_) {
    co_await try_acquire_or_renew();
    if (stopping_) break;
    retry_timer_.expires_after(next_wait());
    co_await retry_timer_.async_wait(kAwait);
  }
  done_ = true;
  deadline_timer_.cancel();
}

Clock::Duration LeaderElector::next_wait() {
  const auto& c = state_.config();
  // client-go renews every RetryPeriod exactly, and jitters only the acquire loop.
  if (state_.leading()) return c.retry_period;
  const double factor = 1.0 + c.jitter_factor * random_.float64();
  return std::chrono::duration_cast<Clock::Duration>(c.retry_period * factor);
}

awaitable<void> LeaderElector::try_acquire_or_renew() {
  auto got = co_await client_->get(lease_);
  if (stopping_) co_return;  // stop() while reading: write nothing more
  std::shared_ptr<rapidjson::Document> lease;
  if (got.ok()) {
    lease = got->body;
    state_.observe(LeaderElectionRecord::from_lease(*lease), clock_.now());
  } else if (got.error().is(kube::Errc::not_found)) {
    state_.observe(std::nullopt, clock_.now());
  } else {
    // The renew deadline still runs (watch_renew_deadline); just try again next period.
    LOG(WARNING) << "error retrieving leader lease " << key_ << ": " << got.error().describe();
    co_return;
  }

  auto decision = state_.next(clock_.now(), clock_.wall_now());
  kube::Result<kube::ApiResponse> written = kube::ApiError{};
  switch (decision.action) {
    case Action::wait:
      VLOG(2) << "leader lease " << key_ << " " << decision.reason;
      co_return;
    case Action::lost:
      lose(decision.reason);
      co_return;
    case Action::create: {
      rapidjson::Document doc(rapidjson::kObjectType);
      auto& a = doc.GetAllocator();
      doc.AddMember("apiVersion", "coordination.k8s.io/v1", a);
      doc.AddMember("kind", "Lease", a);
      rapidjson::Value meta(rapidjson::kObjectType);
      meta.AddMember("name", rapidjson::Value(options_.lease_name, a), a);
      meta.AddMember("namespace", rapidjson::Value(options_.lease_namespace, a), a);
      doc.AddMember("metadata", std::move(meta), a);
      decision.record.to_lease(doc, a);
      auto writer = client_->logging_writes("leader-election", "creating the Lease to lead");
      written = co_await writer.create(collection_, kube::JsonBody(doc));
      break;
    }
    case Action::acquire:
    case Action::renew: {
      // PUT the object as read, new spec: its metadata.resourceVersion makes the write a
      // compare-and-swap, so a concurrent writer makes this one fail with 409.
      CHECK(lease != nullptr);
      rapidjson::Document doc;
      doc.CopyFrom(*lease, doc.GetAllocator());
      decision.record.to_lease(doc, doc.GetAllocator());
      auto writer = client_->logging_writes("leader-election", decision.action == Action::renew
                                                                   ? "renewing the Lease"
                                                                   : "acquiring the Lease");
      written = co_await writer.update(lease_, kube::JsonBody(doc));
      break;
    }
  }
  // Lost meanwhile (the renew deadline passed while the write was in flight): stay lost.
  if (lost_) co_return;
  if (!written.ok()) {
    const auto& e = written.error();
    if (e.is(kube::Errc::conflict) || e.is(kube::Errc::already_exists)) {
      VLOG(1) << "leader lease " << key_ << " was changed by someone else; retrying";
    } else {
      LOG(WARNING) << "error writing leader lease " << key_ << ": " << e.describe();
    }
    co_return;
  }
  const bool was_leading = state_.leading();
  state_.written(decision.record, clock_.now());
  deadline_timer_.cancel();  // re-arm the deadline from this renew
  if (stopping_) {
    // stop() came while acquiring: the Lease names us, but we never act; release() clears it.
    state_.step_down();
    set_gauge(false);
    co_return;
  }
  if (!was_leading) became_leader();
}

awaitable<void> LeaderElector::watch_renew_deadline() {
  // Requests are bounded by the transport's timeouts, which may be longer than the renew deadline:
  // this timer makes a hung renew lose on time, as client-go's renew context does.
  while (!done_) {
    if (state_.leading()) {
      deadline_timer_.expires_after(state_.renew_deadline() - clock_.now());
    } else {
      deadline_timer_.expires_at(asio::steady_timer::time_point::max());
    }
    co_await deadline_timer_.async_wait(kAwait);
    if (done_) break;
    if (state_.leading() && clock_.now() >= state_.renew_deadline()) {
      lose("no successful renew within the renew deadline of " +
           std::to_string(state_.config().renew_deadline.count()) + "ms");
    }
  }
}

void LeaderElector::became_leader() {
  LOG(INFO) << "successfully acquired lease " << key_ << " as " << identity();
  set_gauge(true);
  deadline_timer_.cancel();
  if (on_started_) on_started_();
}

void LeaderElector::lose(const std::string& reason) {
  if (!state_.leading()) return;
  state_.step_down();
  lost_ = true;
  stopping_ = true;
  set_gauge(false);
  retry_timer_.cancel();
  deadline_timer_.cancel();
  LOG(ERROR) << "leader election lost for lease " << key_ << " (" << identity() << "): " << reason;
  if (on_stopped_) on_stopped_();
}

void LeaderElector::stop() {
  stopping_ = true;
  retry_timer_.cancel();
  if (state_.leading()) {
    state_.step_down();
    set_gauge(false);
    LOG(INFO) << "stopped leading lease " << key_ << " without releasing it";
  }
}

awaitable<bool> LeaderElector::release() {
  const bool was_leading = state_.leading();
  stopping_ = true;
  retry_timer_.cancel();
  state_.step_down();
  set_gauge(false);
  // Read first rather than reuse the last object: a renew may still be in flight, and a stale
  // resourceVersion would make the release fail with 409 and the standby wait the whole lease.
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto got = co_await client_->get(lease_);
    if (!got.ok()) {
      if (got.error().is(kube::Errc::not_found)) co_return true;
      LOG(WARNING) << "error reading leader lease " << key_
                   << " to release it: " << got.error().describe();
      co_return false;
    }
    const auto current = LeaderElectionRecord::from_lease(*got->body);
    if (current.holder_identity != identity()) {
      if (was_leading) {
        LOG(INFO) << "not releasing lease " << key_ << ": now held by "
                  << (current.holder_identity.empty() ? "nobody" : current.holder_identity);
      }
      co_return true;
    }
    rapidjson::Document doc;
    doc.CopyFrom(*got->body, doc.GetAllocator());
    LeaderElectorState::release_record(current, clock_.wall_now())
        .to_lease(doc, doc.GetAllocator());
    auto writer = client_->logging_writes("leader-election", "releasing the Lease on the way out");
    auto put = co_await writer.update(lease_, kube::JsonBody(doc));
    if (put.ok()) {
      LOG(INFO) << "released leader lease " << key_ << " (" << identity() << ")";
      co_return true;
    }
    if (!put.error().is(kube::Errc::conflict)) {
      LOG(WARNING) << "error releasing leader lease " << key_ << ": " << put.error().describe();
      co_return false;
    }
  }
  LOG(WARNING) << "gave up releasing leader lease " << key_ << " after repeated conflicts";
  co_return false;
}

void LeaderElector::set_gauge(bool leading) {
  if (gauge_ != nullptr) gauge_->set(leading ? 1 : 0);
}

}  // namespace ctrl
