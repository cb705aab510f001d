// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rapidjson/document.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "ctrl/base/clock.h"

namespace ctrl {

// The spec of a coordination.k8s.io/v1 Lease as leader election reads and writes it (client-go's
// resourcelock.LeaderElectionRecord). A missing field reads as its zero value, as Go's decoding
// of the Lease does.
struct LeaderElectionRecord {
  // Not an aggregate: see kube/list_options.h (GCC 12 co_await temporaries).
  LeaderElectionRecord() = default;

  std::string holder_identity;  // empty: nobody holds the lease (released)
  std::chrono::seconds lease_duration{0};
  std::optional<Clock::WallTime> acquire_time;
  std::optional<Clock::WallTime> renew_time;
  std::int64_t lease_transitions = 0;

  bool operator==(const LeaderElectionRecord&) const = default;

  // From a Lease object (its `spec`). Fields of the wrong type or unparseable times read as unset,
  // so a Lease edited by hand cannot crash the elector; it is simply taken over when it expires.
  static LeaderElectionRecord from_lease(const rapidjson::Value& lease);

  // Replaces `lease.spec` with this record, every field set (client-go's
  // LeaderElectionRecordToLeaseSpec); times as MicroTime. `lease` must be an object (CHECKed).
  void to_lease(rapidjson::Value& lease, rapidjson::Document::AllocatorType& allocator) const;
};

}  // namespace ctrl
