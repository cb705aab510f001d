// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "ctrl/base/clock.h"

namespace ctrl {

// metav1.MicroTime on the wire: RFC 3339 in UTC with exactly six fractional digits,
// "2024-01-01T00:00:00.000000Z" (Go's "2006-01-02T15:04:05.000000Z07:00" after .UTC()). Times are
// truncated toward the past to whole microseconds, as Go's formatting does.
std::string format_micro_time(Clock::WallTime t);

// Any RFC 3339 date-time: 'T' or 't' (or a space) between date and time, zero to nine fractional
// digits, and 'Z'/'z' or a numeric offset "+hh:mm"/"-hh:mm". Other writers of a Lease (kubectl
// edit, other languages' clients) may not send MicroTime's exact shape, so anything RFC 3339 is
// accepted; digits past nanoseconds are refused rather than silently dropped. Fields are range
// checked (month, day of that month, hour, minute, second 0..59 as Go's time.Parse does). Empty
// when the text is not a valid time.
std::optional<Clock::WallTime> parse_micro_time(std::string_view text);

}  // namespace ctrl
