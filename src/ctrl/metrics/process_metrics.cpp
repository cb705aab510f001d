// SPDX-License-Identifier: Apache-2.0
#include "ctrl/metrics/process_metrics.h"

#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace ctrl {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <typename T>
bool parse_number(std::string_view s, T& out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

std::optional<std::string> read_file(const char* path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::optional<ProcStat> read_self_stat() {
  auto text = read_file("/proc/self/stat");
  if (!text) return std::nullopt;
  return parse_proc_stat(*text);
}

double ticks_per_second() {
  static const long ticks = sysconf(_SC_CLK_TCK);
  return ticks > 0 ? static_cast<double>(ticks) : 100.0;
}

double cpu_seconds() {
  auto stat = read_self_stat();
  if (!stat) return kNaN;
  return static_cast<double>(stat->utime_ticks + stat->stime_ticks) / ticks_per_second();
}

double resident_bytes() {
  auto stat = read_self_stat();
  if (!stat) return kNaN;
  return static_cast<double>(stat->rss_pages) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

double virtual_bytes() {
  auto stat = read_self_stat();
  if (!stat) return kNaN;
  return static_cast<double>(stat->vsize_bytes);
}

double start_time_seconds() {
  auto stat = read_self_stat();
  auto proc_stat = read_file("/proc/stat");
  if (!stat || !proc_stat) return kNaN;
  auto boot = parse_boot_time(*proc_stat);
  if (!boot) return kNaN;
  return static_cast<double>(*boot) +
         static_cast<double>(stat->starttime_ticks) / ticks_per_second();
}

double open_fds() {
  std::error_code ec;
  std::filesystem::directory_iterator it("/proc/self/fd", ec);
  if (ec) return kNaN;
  // The iterator's own descriptor is counted too, as client_golang's (which also opens the
  // directory to read it) does.
  double n = 0;
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (ec) return kNaN;
    ++n;
  }
  return n;
}

// The soft limit, which is what open() runs into; /proc/self/limits shows the same number.
double max_fds() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return kNaN;
  if (lim.rlim_cur == RLIM_INFINITY) return std::numeric_limits<double>::infinity();
  return static_cast<double>(lim.rlim_cur);
}

}  // namespace

std::optional<ProcStat> parse_proc_stat(std::string_view text) {
  const auto close = text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  // Fields after the command name, starting with field 3 (state).
  std::vector<std::string_view> fields;
  std::size_t pos = close + 1;
  while (pos < text.size()) {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\n')) ++pos;
    const std::size_t start = pos;
    while (pos < text.size() && text[pos] != ' ' && text[pos] != '\n') ++pos;
    if (pos > start) fields.push_back(text.substr(start, pos - start));
  }
  // proc(5) field N is fields[N - 3]; the last one needed is 24 (rss).
  if (fields.size() < 24 - 2) return std::nullopt;
  auto field = [&](std::size_t n) { return fields[n - 3]; };
  ProcStat s;
  if (!parse_number(field(14), s.utime_ticks) || !parse_number(field(15), s.stime_ticks) ||
      !parse_number(field(22), s.starttime_ticks) || !parse_number(field(23), s.vsize_bytes) ||
      !parse_number(field(24), s.rss_pages)) {
    return std::nullopt;
  }
  return s;
}

std::optional<std::uint64_t> parse_boot_time(std::string_view proc_stat_text) {
  std::size_t pos = 0;
  while (pos < proc_stat_text.size()) {
    std::size_t end = proc_stat_text.find('\n', pos);
    if (end == std::string_view::npos) end = proc_stat_text.size();
    std::string_view line = proc_stat_text.substr(pos, end - pos);
    if (line.starts_with("btime ")) {
      std::uint64_t v = 0;
      if (parse_number(line.substr(6), v)) return v;
      return std::nullopt;
    }
    pos = end + 1;
  }
  return std::nullopt;
}

void register_process_metrics(MetricsRegistry& registry) {
  // Help texts are client_golang's, so dashboards and alerts that show them read the same.
  registry.set_callback("process_cpu_seconds_total",
                        "Total user and system CPU time spent in seconds.", MetricType::counter, {},
                        cpu_seconds);
  registry.set_callback("process_resident_memory_bytes", "Resident memory size in bytes.",
                        MetricType::gauge, {}, resident_bytes);
  registry.set_callback("process_virtual_memory_bytes", "Virtual memory size in bytes.",
                        MetricType::gauge, {}, virtual_bytes);
  registry.set_callback("process_start_time_seconds",
                        "Start time of the process since unix epoch in seconds.", MetricType::gauge,
                        {}, start_time_seconds);
  registry.set_callback("process_open_fds", "Number of open file descriptors.", MetricType::gauge,
                        {}, open_fds);
  registry.set_callback("process_max_fds", "Maximum number of open file descriptors.",
                        MetricType::gauge, {}, max_fds);
}

}  // namespace ctrl
