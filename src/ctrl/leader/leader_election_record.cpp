// SPDX-License-Identifier: Apache-2.0
#include "ctrl/leader/leader_election_record.h"

#include <glog/logging.h>

#include <string_view>

#include "ctrl/base/micro_time.h"

namespace ctrl {

namespace {

std::optional<Clock::WallTime> time_field(const rapidjson::Value& spec, const char* name) {
  auto it = spec.FindMember(name);
  if (it == spec.MemberEnd() || !it->value.IsString()) return std::nullopt;
  return parse_micro_time(std::string_view(it->value.GetString(), it->value.GetStringLength()));
}

std::int64_t int_field(const rapidjson::Value& spec, const char* name) {
  auto it = spec.FindMember(name);
  if (it == spec.MemberEnd() || !it->value.IsInt64()) return 0;
  return it->value.GetInt64();
}

}  // namespace

LeaderElectionRecord LeaderElectionRecord::from_lease(const rapidjson::Value& lease) {
  LeaderElectionRecord r;
  if (!lease.IsObject()) return r;
  auto spec_it = lease.FindMember("spec");
  if (spec_it == lease.MemberEnd() || !spec_it->value.IsObject()) return r;
  const auto& spec = spec_it->value;
  if (auto h = spec.FindMember("holderIdentity"); h != spec.MemberEnd() && h->value.IsString()) {
    r.holder_identity.assign(h->value.GetString(), h->value.GetStringLength());
  }
  r.lease_duration = std::chrono::seconds(int_field(spec, "leaseDurationSeconds"));
  r.acquire_time = time_field(spec, "acquireTime");
  r.renew_time = time_field(spec, "renewTime");
  r.lease_transitions = int_field(spec, "leaseTransitions");
  return r;
}

void LeaderElectionRecord::to_lease(rapidjson::Value& lease,
                                    rapidjson::Document::AllocatorType& allocator) const {
  CHECK(lease.IsObject()) << "a Lease must be a JSON object";
  rapidjson::Value spec(rapidjson::kObjectType);
  spec.AddMember("holderIdentity", rapidjson::Value(holder_identity, allocator), allocator);
  spec.AddMember("leaseDurationSeconds",
                 rapidjson::Value(static_cast<std::int64_t>(lease_duration.count())), allocator);
  if (acquire_time) {
    spec.AddMember("acquireTime", rapidjson::Value(format_micro_time(*acquire_time), allocator),
                   allocator);
  }
  if (renew_time) {
    spec.AddMember("renewTime", rapidjson::Value(format_micro_time(*renew_time), allocator),
                   allocator);
  }
  spec.AddMember("leaseTransitions", rapidjson::Value(lease_transitions), allocator);
  if (auto it = lease.FindMember("spec"); it != lease.MemberEnd()) {
    it->value = std::move(spec);
  } else {
    lease.AddMember("spec", std::move(spec), allocator);
  }
}

}  // namespace ctrl
