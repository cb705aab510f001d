// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "ctrl/metrics/metrics_registry.h"

namespace ctrl {

// The fields of /proc/<pid>/stat that the process_* metrics need (proc(5) numbering).
struct ProcStat {
  std::uint64_t utime_ticks = 0;      // 14: user CPU time, in clock ticks
  std::uint64_t stime_ticks = 0;      // 15: system CPU time, in clock ticks
  std::uint64_t starttime_ticks = 0;  // 22: start time after boot, in clock ticks
  std::uint64_t vsize_bytes = 0;      // 23: virtual memory size
  std::int64_t rss_pages = 0;         // 24: resident set size, in pages
};

// Parses one /proc/<pid>/stat line; the command name (field 2) may hold spaces and parentheses,
// so fields are counted from the last ')'. Empty when the text is not a stat line.
std::optional<ProcStat> parse_proc_stat(std::string_view text);

// The `btime` line of /proc/stat: boot time in seconds since the epoch.
std::optional<std::uint64_t> parse_boot_time(std::string_view proc_stat_text);

// Registers client_golang's process collector metrics, read from /proc/self at scrape time:
// process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
// process_start_time_seconds, process_open_fds, process_max_fds. A value that cannot be read is
// reported as NaN rather than a made-up number. Call once per registry.
void register_process_metrics(MetricsRegistry& registry);

}  // namespace ctrl
