// SPDX-License-Identifier: Apache-2.0
#include "ctrl/base/micro_time.h"

#include <chrono>
#include <cstdint>
#include <cstdio>

namespace ctrl {
namespace chr = std::chrono;

namespace {

// Reads exactly `n` decimal digits at `pos`; advances `pos`.
std::optional<int> digits(std::string_view s, std::size_t& pos, std::size_t n) {
  if (pos + n > s.size()) return std::nullopt;
  int v = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const char c = s[pos + i];
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  pos += n;
  return v;
}

bool expect(std::string_view s, std::size_t& pos, char c) {
  if (pos >= s.size() || s[pos] != c) return false;
  ++pos;
  return true;
}

}  // namespace

std::string format_micro_time(Clock::WallTime t) {
  // floor, not duration_cast: a time before 1970 must not round toward the epoch.
  const auto us = chr::floor<chr::microseconds>(t.time_since_epoch());
  const auto days = chr::floor<chr::days>(us);
  const chr::year_month_day ymd{chr::sys_days{days}};
  const chr::hh_mm_ss<chr::microseconds> tod{us - days};
  char buf[48];
  const int n = std::snprintf(
      buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%06lldZ", static_cast<int>(ymd.year()),
      static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
      static_cast<int>(tod.hours().count()), static_cast<int>(tod.minutes().count()),
      static_cast<int>(tod.seconds().count()), static_cast<long long>(tod.subseconds().count()));
  return std::string(buf, static_cast<std::size_t>(n));
}

std::optional<Clock::WallTime> parse_micro_time(std::string_view s) {
  std::size_t pos = 0;
  const auto year = digits(s, pos, 4);
  if (!year || !expect(s, pos, '-')) return std::nullopt;
  const auto month = digits(s, pos, 2);
  if (!month || !expect(s, pos, '-')) return std::nullopt;
  const auto day = digits(s, pos, 2);
  if (!day) return std::nullopt;
  if (pos >= s.size() || (s[pos] != 'T' && s[pos] != 't' && s[pos] != ' ')) return std::nullopt;
  ++pos;
  const auto hour = digits(s, pos, 2);
  if (!hour || !expect(s, pos, ':')) return std::nullopt;
  const auto minute = digits(s, pos, 2);
  if (!minute || !expect(s, pos, ':')) return std::nullopt;
  const auto second = digits(s, pos, 2);
  if (!second) return std::nullopt;

  std::int64_t nanos = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    std::size_t n = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (++n > 9) return std::nullopt;
      nanos = nanos * 10 + (s[pos] - '0');
      ++pos;
    }
    if (n == 0) return std::nullopt;
    for (; n < 9; ++n) nanos *= 10;
  }

  int offset_minutes = 0;
  if (pos >= s.size()) return std::nullopt;
  if (s[pos] == 'Z' || s[pos] == 'z') {
    ++pos;
  } else if (s[pos] == '+' || s[pos] == '-') {
    const int sign = s[pos] == '-' ? -1 : 1;
    ++pos;
    const auto oh = digits(s, pos, 2);
    if (!oh || !expect(s, pos, ':')) return std::nullopt;
    const auto om = digits(s, pos, 2);
    if (!om || *oh > 23 || *om > 59) return std::nullopt;
    offset_minutes = sign * (*oh * 60 + *om);
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;

  if (*hour > 23 || *minute > 59 || *second > 59) return std::nullopt;
  const chr::year_month_day ymd{chr::year{*year}, chr::month{static_cast<unsigned>(*month)},
                                chr::day{static_cast<unsigned>(*day)}};
  if (!ymd.ok()) return std::nullopt;  // month 13, February 30th, ...

  const auto since_epoch = chr::sys_days{ymd}.time_since_epoch() + chr::hours{*hour} +
                           chr::minutes{*minute - offset_minutes} + chr::seconds{*second} +
                           chr::nanoseconds{nanos};
  return Clock::WallTime{chr::duration_cast<Clock::WallTime::duration>(since_epoch)};
}

}  // namespace ctrl
