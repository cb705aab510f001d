// SPDX-License-Identifier: Apache-2.0
#include "ctrl/metrics/metrics_registry.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

TEST_CASE("registry renders the text exposition format exactly", "[metrics]") {
  ctrl::MetricsRegistry registry;
  registry.counter("requests_total", "Requests handled.", {{"code", "200"}, {"method", "GET"}})
      .inc(3);
  registry.counter("requests_total", "Requests handled.", {{"method", "GET"}, {"code", "404"}})
      .inc();
  registry.gauge("active_workers", "Workers busy now.").set(2);
  auto& h = registry.histogram("latency_seconds", "Request latency.", {0.5, 1}, {{"verb", "get"}});
  h.observe(0.25);
  h.observe(0.5);  // on a bound: counted in that bucket, since `le` is "less or equal"
  h.observe(4);
  double leader = 0;
  registry.set_callback("leader_status", "1 when leading.", ctrl::MetricType::gauge,
                        {{"name", "lock"}}, [&leader] { return leader; });
  leader = 1;  // read at scrape, not at registration

  // Families by name; series by labels; label names sorted; histogram buckets cumulative.
  const std::string expected =
      "# HELP active_workers Workers busy now.\n"
      "# TYPE active_workers gauge\n"
      "active_workers 2\n"
      "# HELP latency_seconds Request latency.\n"
      "# TYPE latency_seconds histogram\n"
      "latency_seconds_bucket{verb=\"get\",le=\"0.5\"} 2\n"
      "latency_seconds_bucket{verb=\"get\",le=\"1\"} 2\n"
      "latency_seconds_bucket{verb=\"get\",le=\"+Inf\"} 3\n"
      "latency_seconds_sum{verb=\"get\"} 4.75\n"
      "latency_seconds_count{verb=\"get\"} 3\n"
      "# HELP leader_status 1 when leading.\n"
      "# TYPE leader_status gauge\n"
      "leader_status{name=\"lock\"} 1\n"
      "# HELP requests_total Requests handled.\n"
      "# TYPE requests_total counter\n"
      "requests_total{code=\"200\",method=\"GET\"} 3\n"
      "requests_total{code=\"404\",method=\"GET\"} 1\n";
  CHECK(registry.render() == expected);
}

TEST_CASE("the same series is returned for the same name and labels", "[metrics]") {
  ctrl::MetricsRegistry registry;
  auto& a = registry.counter("c_total", "help", {{"k", "v"}});
  a.inc(2);
  auto& b = registry.counter("c_total", "help", {{"k", "v"}});
  CHECK(&a == &b);
  CHECK(b.value() == 2);
  auto& g = registry.gauge("g", "help");
  g.inc();
  g.inc();
  g.dec();
  g.add(0.5);
  CHECK(registry.gauge("g", "help").value() == 1.5);
}

TEST_CASE("label values and help text are escaped", "[metrics]") {
  CHECK(ctrl::escape_label_value("plain") == "plain");
  CHECK(ctrl::escape_label_value("a\"b\\c\nd") == "a\\\"b\\\\c\\nd");
  CHECK(ctrl::escape_help("line1\nback\\slash \"quotes stay\"") ==
        "line1\\nback\\\\slash \"quotes stay\"");

  ctrl::MetricsRegistry registry;
  registry.counter("x_total", "Two\nlines", {{"path", "C:\\dir \"q\"\n"}}).inc();
  CHECK(registry.render() ==
        "# HELP x_total Two\\nlines\n"
        "# TYPE x_total counter\n"
        "x_total{path=\"C:\\\\dir \\\"q\\\"\\n\"} 1\n");
}

TEST_CASE("values are written like client_golang writes them", "[metrics]") {
  CHECK(ctrl::format_metric_value(0) == "0");
  CHECK(ctrl::format_metric_value(-0.0) == "0");
  CHECK(ctrl::format_metric_value(1) == "1");
  CHECK(ctrl::format_metric_value(-1.5) == "-1.5");
  CHECK(ctrl::format_metric_value(0.005) == "0.005");
  CHECK(ctrl::format_metric_value(0.0001) == "0.0001");
  CHECK(ctrl::format_metric_value(0.00001) == "1e-05");
  CHECK(ctrl::format_metric_value(1e-8) == "1e-08");
  CHECK(ctrl::format_metric_value(100000) == "100000");
  CHECK(ctrl::format_metric_value(1e6) == "1e+06");
  CHECK(ctrl::format_metric_value(22736896) == "2.2736896e+07");
  CHECK(ctrl::format_metric_value(1.7040672e9) == "1.7040672e+09");
  CHECK(ctrl::format_metric_value(std::numeric_limits<double>::infinity()) == "+Inf");
  CHECK(ctrl::format_metric_value(-std::numeric_limits<double>::infinity()) == "-Inf");
  CHECK(ctrl::format_metric_value(std::nan("")) == "NaN");
}

TEST_CASE("histogram counts are cumulative and include +Inf", "[metrics]") {
  ctrl::Histogram h({1, 2, 4, std::numeric_limits<double>::infinity()});
  CHECK(h.upper_bounds() == std::vector<double>{1, 2, 4});  // a trailing +Inf is implicit
  for (double v : {0.5, 1.0, 1.5, 3.0, 3.5, 100.0}) h.observe(v);
  CHECK(h.cumulative_counts() == std::vector<std::uint64_t>{2, 3, 5});
  CHECK(h.count() == 6);
  CHECK(h.sum() == 109.5);
}

TEST_CASE("standard bucket layouts match controller-runtime", "[metrics]") {
  const auto reconcile = ctrl::reconcile_time_buckets();
  REQUIRE(reconcile.size() == 40);
  CHECK(reconcile.front() == 0.005);
  CHECK(reconcile.back() == 60);

  // Built by repeated multiplication like prometheus.ExponentialBuckets, so the same
  // not-quite-round `le` values appear as in Go operators' output.
  const auto wq = ctrl::workqueue_duration_buckets();
  REQUIRE(wq.size() == 12);
  std::vector<std::string> le;
  for (double b : wq) le.push_back(ctrl::format_metric_value(b));
  CHECK(le == std::vector<std::string>{"1e-08", "1e-07", "1e-06", "9.999999999999999e-06",
                                       "9.999999999999999e-05", "0.001", "0.01", "0.1", "1", "10",
                                       "100", "1000"});
  CHECK(ctrl::exponential_buckets(1, 2, 4) == std::vector<double>{1, 2, 4, 8});
}

TEST_CASE("families without series are not rendered, callbacks can be removed", "[metrics]") {
  ctrl::MetricsRegistry registry;
  CHECK(registry.render().empty());
  registry.set_callback("up_seconds", "Uptime.", ctrl::MetricType::counter, {{"q", "a"}},
                        [] { return 12.5; });
  registry.set_callback("up_seconds", "Uptime.", ctrl::MetricType::counter, {{"q", "b"}},
                        [] { return 1.0; });
  CHECK(registry.render() ==
        "# HELP up_seconds Uptime.\n"
        "# TYPE up_seconds counter\n"
        "up_seconds{q=\"a\"} 12.5\n"
        "up_seconds{q=\"b\"} 1\n");
  registry.remove_callback("up_seconds", {{"q", "a"}});
  registry.remove_callback("up_seconds", {{"q", "b"}});
  CHECK(registry.render().empty());
  // A removed series can be registered again (a controller restarted under the same name).
  registry.set_callback("up_seconds", "Uptime.", ctrl::MetricType::counter, {{"q", "a"}},
                        [] { return 2.0; });
  CHECK(registry.render().find("up_seconds{q=\"a\"} 2\n") != std::string::npos);
}

TEST_CASE("content type is the 0.0.4 text format", "[metrics]") {
  CHECK(ctrl::MetricsRegistry::kContentType == "text/plain; version=0.0.4; charset=utf-8");
}

TEST_CASE("a collector supplies a family's series at scrape time", "[metrics]") {
  ctrl::MetricsRegistry registry;
  ctrl::MetricsRegistry::Samples samples = {
      {{{"code", "404"}, {"method", "GET"}}, 2},
      {{{"code", "200"}, {"method", "GET"}}, 7},
  };
  registry.set_collector("rest_client_requests_total", "Number of HTTP requests.",
                         ctrl::MetricType::counter, [&samples] { return samples; });
  samples.push_back({{{"code", "200"}, {"method", "PATCH"}}, 1});
  CHECK(registry.render() ==
        "# HELP rest_client_requests_total Number of HTTP requests.\n"
        "# TYPE rest_client_requests_total counter\n"
        "rest_client_requests_total{code=\"200\",method=\"GET\"} 7\n"
        "rest_client_requests_total{code=\"200\",method=\"PATCH\"} 1\n"
        "rest_client_requests_total{code=\"404\",method=\"GET\"} 2\n");
  registry.remove_collector("rest_client_requests_total");
  CHECK(registry.render().empty());
}
