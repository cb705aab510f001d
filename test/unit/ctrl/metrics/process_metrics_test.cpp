// SPDX-License-Identifier: Apache-2.0
#include "ctrl/metrics/process_metrics.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <sstream>
#include <string>

namespace {

// The value of an unlabelled sample in rendered text.
double sample(const std::string& text, const std::string& name) {
  const auto pos = text.find("\n" + name + " ");
  REQUIRE(pos != std::string::npos);
  return std::stod(text.substr(pos + name.size() + 2));
}

}  // namespace

TEST_CASE("parse_proc_stat counts fields after the last parenthesis", "[metrics]") {
  // A command name with spaces and a ')' inside must not shift the fields.
  const std::string line =
      "4242 (my (odd) proc) S 1 4242 4242 0 -1 4194560 1510 0 0 0 250 130 0 0 20 0 5 0 "
      "987654 123456789 2048 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
  auto stat = ctrl::parse_proc_stat(line);
  REQUIRE(stat);
  CHECK(stat->utime_ticks == 250);
  CHECK(stat->stime_ticks == 130);
  CHECK(stat->starttime_ticks == 987654);
  CHECK(stat->vsize_bytes == 123456789);
  CHECK(stat->rss_pages == 2048);

  CHECK_FALSE(ctrl::parse_proc_stat("garbage"));
  CHECK_FALSE(ctrl::parse_proc_stat("1 (short) S 1 2 3"));
  CHECK_FALSE(ctrl::parse_proc_stat(
      "1 (x) S 1 1 1 0 -1 0 0 0 0 0 NaN 1 0 0 20 0 1 0 5 6 7 8 9 10 11 12 13 14"));
}

TEST_CASE("parse_boot_time reads the btime line", "[metrics]") {
  CHECK(ctrl::parse_boot_time("cpu  1 2 3\nintr 5\nbtime 1700000000\nprocesses 9\n") ==
        std::optional<std::uint64_t>(1700000000));
  CHECK_FALSE(ctrl::parse_boot_time("cpu 1 2 3\n"));
  CHECK_FALSE(ctrl::parse_boot_time("btime soon\n"));
}

TEST_CASE("process metrics read /proc/self at scrape time", "[metrics]") {
  ctrl::MetricsRegistry registry;
  ctrl::register_process_metrics(registry);
  const std::string text = "\n" + registry.render();
  CHECK(text.find("# TYPE process_cpu_seconds_total counter\n") != std::string::npos);
  CHECK(text.find("# TYPE process_open_fds gauge\n") != std::string::npos);

  CHECK(sample(text, "process_cpu_seconds_total") >= 0);
  CHECK(sample(text, "process_resident_memory_bytes") > 1024 * 1024);
  CHECK(sample(text, "process_virtual_memory_bytes") >=
        sample(text, "process_resident_memory_bytes"));
  CHECK(sample(text, "process_open_fds") >= 3);  // stdin, stdout, stderr at least
  CHECK(sample(text, "process_max_fds") >= sample(text, "process_open_fds"));

  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const double start = sample(text, "process_start_time_seconds");
  CHECK(start <= now + 1);
  CHECK(start > now - 24 * 3600);  // this test binary started recently
}
