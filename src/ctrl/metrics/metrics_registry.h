// SPDX-License-Identifier: Apache-2.0
#pragma once

// Room src/ctrl/metrics/: the Prometheus registry and its counters, gauges, histograms, process and
// REST client metrics. May use: src/ctrl/base/, src/kube/http/ (the Rooms table in
// docs/architecture.md).

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ctrl/metrics/counter.h"
#include "ctrl/metrics/gauge.h"
#include "ctrl/metrics/histogram.h"

namespace ctrl {

// Label name -> value. A std::map so series are ordered by labels and rendered with sorted label
// names, which is what client_golang does and keeps /metrics output stable.
using Labels = std::map<std::string, std::string>;

enum class MetricType { counter, gauge, histogram };

// A small Prometheus registry: metric families (name, help, type, label names) holding one series
// per label set, rendered in the text exposition format 0.0.4. Families are created on first use;
// using a name again with another type, help or set of label names is a bug and fails a CHECK,
// as client_golang's registry refuses it. Returned references stay valid for the registry's
// lifetime. Single-threaded, like the rest of the runtime.
class MetricsRegistry {
 public:
  // The text format's Content-Type, for the /metrics handler.
  static constexpr std::string_view kContentType = "text/plain; version=0.0.4; charset=utf-8";

  MetricsRegistry();
  ~MetricsRegistry();
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  Counter& counter(std::string_view name, std::string_view help, const Labels& labels = {});
  Gauge& gauge(std::string_view name, std::string_view help, const Labels& labels = {});
  Histogram& histogram(std::string_view name, std::string_view help,
                       const std::vector<double>& upper_bounds, const Labels& labels = {});

  // A series whose value is computed at scrape time (type counter or gauge), for values that are
  // cheaper to read than to track: process stats, a queue's oldest in-flight item. The callback
  // must stay callable until remove_callback or the registry's destruction. One callback per
  // series: registering the same series twice fails a CHECK (two owners would be a bug).
  void set_callback(std::string_view name, std::string_view help, MetricType type,
                    const Labels& labels, std::function<double()> callback);
  void remove_callback(std::string_view name, const Labels& labels);

  // A whole family computed at scrape time, for series whose label sets are only known then (for
  // example rest_client_requests_total from kube::RequestMetrics::snapshot()). Samples may come
  // in any order; they are rendered sorted by labels. One collector per family; it may share the
  // family with set_callback series, but not a label set.
  using Samples = std::vector<std::pair<Labels, double>>;
  void set_collector(std::string_view name, std::string_view help, MetricType type,
                     std::function<Samples()> collector);
  void remove_collector(std::string_view name);

  // Families sorted by name, series by labels; families without series are left out.
  std::string render() const;

 private:
  struct Family;
  Family& family(std::string_view name, std::string_view help, MetricType type, bool callback,
                 const Labels& labels);

  std::map<std::string, std::unique_ptr<Family>, std::less<>> families_;
};

// Text-format helpers, exposed for tests and for other renderers.
// A sample value or `le` bound the way client_golang writes it (Go's 'g' with shortest digits:
// 1, 0.005, 1e-08, 2.5e+07, +Inf, -Inf, NaN).
std::string format_metric_value(double v);
// A label value inside double quotes: backslash, double quote and newline escaped.
std::string escape_label_value(std::string_view v);
// A HELP text: backslash and newline escaped.
std::string escape_help(std::string_view v);

}  // namespace ctrl
