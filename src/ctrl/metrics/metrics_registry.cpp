// SPDX-License-Identifier: Apache-2.0
#include "ctrl/metrics/metrics_registry.h"

#include <glog/logging.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <set>

namespace ctrl {

struct MetricsRegistry::Family {
  std::string help;
  MetricType type;
  bool callback;
  std::set<std::string> label_names;
  std::vector<double> upper_bounds;  // histograms only
  std::map<Labels, Counter> counters;
  std::map<Labels, Gauge> gauges;
  std::map<Labels, Histogram> histograms;
  std::map<Labels, std::function<double()>> callbacks;
  std::function<Samples()> collector;

  bool empty() const {
    return counters.empty() && gauges.empty() && histograms.empty() && callbacks.empty() &&
           !collector;
  }
};

namespace {

const char* type_name(MetricType t) {
  switch (t) {
    case MetricType::counter:
      return "counter";
    case MetricType::gauge:
      return "gauge";
    case MetricType::histogram:
      return "histogram";
  }
  return "untyped";
}

bool valid_name(std::string_view name, bool allow_colon) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (allow_colon && c == ':');
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

// `{a="x",b="y"` plus an optional extra label (histogram `le`) and the closing brace; nothing at
// all when there are no labels.
void append_labels(std::string& out, const Labels& labels, std::string_view extra_name = {},
                   std::string_view extra_value = {}) {
  if (labels.empty() && extra_name.empty()) return;
  out += '{';
  bool first = true;
  for (const auto& [name, value] : labels) {
    if (!first) out += ',';
    first = false;
    out += name;
    out += "=\"";
    out += escape_label_value(value);
    out += '"';
  }
  if (!extra_name.empty()) {
    if (!first) out += ',';
    out += extra_name;
    out += "=\"";
    out += extra_value;
    out += '"';
  }
  out += '}';
}

void append_sample(std::string& out, std::string_view name, std::string_view suffix,
                   const Labels& labels, double value, std::string_view extra_name = {},
                   std::string_view extra_value = {}) {
  out += name;
  out += suffix;
  append_labels(out, labels, extra_name, extra_value);
  out += ' ';
  out += format_metric_value(value);
  out += '\n';
}

}  // namespace

MetricsRegistry::MetricsRegistry() = default;
MetricsRegistry::~MetricsRegistry() = default;

MetricsRegistry::Family& MetricsRegistry::family(std::string_view name, std::string_view help,
                                                 MetricType type, bool callback,
                                                 const Labels& labels) {
  std::set<std::string> label_names;
  for (const auto& [label, value] : labels) {
    CHECK(valid_name(label, false) && !label.starts_with("__")) << "bad label name " << label;
    CHECK(type != MetricType::histogram || label != "le") << name << ": `le` is reserved";
    label_names.insert(label);
  }
  auto it = families_.find(name);
  if (it == families_.end()) {
    CHECK(valid_name(name, true)) << "bad metric name " << name;
    auto f = std::make_unique<Family>();
    f->help = std::string(help);
    f->type = type;
    f->callback = callback;
    f->label_names = std::move(label_names);
    it = families_.emplace(std::string(name), std::move(f)).first;
    return *it->second;
  }
  Family& f = *it->second;
  CHECK(f.type == type && f.callback == callback)
      << name << " registered again as another kind of metric";
  CHECK_EQ(f.help, help) << name << " registered again with other help text";
  CHECK(f.label_names == label_names) << name << " used with other label names";
  return f;
}

Counter& MetricsRegistry::counter(std::string_view name, std::string_view help,
                                  const Labels& labels) {
  return family(name, help, MetricType::counter, false, labels).counters[labels];
}

Gauge& MetricsRegistry::gauge(std::string_view name, std::string_view help, const Labels& labels) {
  return family(name, help, MetricType::gauge, false, labels).gauges[labels];
}

Histogram& MetricsRegistry::histogram(std::string_view name, std::string_view help,
                                      const std::vector<double>& upper_bounds,
                                      const Labels& labels) {
  Family& f = family(name, help, MetricType::histogram, false, labels);
  auto it = f.histograms.find(labels);
  if (it != f.histograms.end()) return it->second;
  Histogram h(upper_bounds);
  if (f.histograms.empty() && f.upper_bounds.empty()) {
    f.upper_bounds = h.upper_bounds();
  } else {
    CHECK(f.upper_bounds == h.upper_bounds()) << name << " used with other buckets";
  }
  return f.histograms.emplace(labels, std::move(h)).first->second;
}

void MetricsRegistry::set_callback(std::string_view name, std::string_view help, MetricType type,
                                   const Labels& labels, std::function<double()> callback) {
  CHECK(type != MetricType::histogram) << name << ": callbacks are counters or gauges";
  CHECK(callback);
  Family& f = family(name, help, type, true, labels);
  CHECK(f.callbacks.emplace(labels, std::move(callback)).second)
      << name << ": this series already has a callback";
}

void MetricsRegistry::remove_callback(std::string_view name, const Labels& labels) {
  auto it = families_.find(name);
  CHECK(it != families_.end() && it->second->callback) << name << " has no callbacks";
  it->second->callbacks.erase(labels);
}

void MetricsRegistry::set_collector(std::string_view name, std::string_view help, MetricType type,
                                    std::function<Samples()> collector) {
  CHECK(type != MetricType::histogram) << name << ": collectors are counters or gauges";
  CHECK(collector);
  auto it = families_.find(name);
  // Label names vary per sample, so the family is registered without fixing them.
  Family& f = it == families_.end() ? family(name, help, type, true, {}) : *it->second;
  CHECK(f.type == type && f.callback) << name << " registered again as another kind of metric";
  CHECK_EQ(f.help, help) << name << " registered again with other help text";
  CHECK(!f.collector) << name << " already has a collector";
  f.collector = std::move(collector);
}

void MetricsRegistry::remove_collector(std::string_view name) {
  auto it = families_.find(name);
  CHECK(it != families_.end() && it->second->collector) << name << " has no collector";
  it->second->collector = nullptr;
}

std::string MetricsRegistry::render() const {
  std::string out;
  for (const auto& [name, f] : families_) {
    if (f->empty()) continue;
    out += "# HELP " + name + " " + escape_help(f->help) + "\n";
    out += "# TYPE " + name + " " + type_name(f->type) + "\n";
    for (const auto& [labels, c] : f->counters) append_sample(out, name, "", labels, c.value());
    for (const auto& [labels, g] : f->gauges) append_sample(out, name, "", labels, g.value());
    if (!f->callbacks.empty() || f->collector) {
      std::map<Labels, double> values;
      for (const auto& [labels, cb] : f->callbacks) values.emplace(labels, cb());
      if (f->collector) {
        for (auto& [labels, value] : f->collector()) {
          for (const auto& [label, unused] : labels) {
            CHECK(valid_name(label, false)) << name << ": bad label name " << label;
          }
          CHECK(values.emplace(std::move(labels), value).second)
              << name << ": two samples with the same labels";
        }
      }
      for (const auto& [labels, value] : values) append_sample(out, name, "", labels, value);
    }
    for (const auto& [labels, h] : f->histograms) {
      const std::vector<std::uint64_t> cumulative = h.cumulative_counts();
      for (std::size_t i = 0; i < cumulative.size(); ++i) {
        append_sample(out, name, "_bucket", labels, static_cast<double>(cumulative[i]), "le",
                      format_metric_value(h.upper_bounds()[i]));
      }
      append_sample(out, name, "_bucket", labels, static_cast<double>(h.count()), "le", "+Inf");
      append_sample(out, name, "_sum", labels, h.sum());
      append_sample(out, name, "_count", labels, static_cast<double>(h.count()));
    }
  }
  return out;
}

std::string format_metric_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == 0) return "0";  // client_golang writes -0 as 0 too
  // Go's strconv.FormatFloat(v, 'g', -1, 64): shortest round-trip digits, in exponent form when
  // the decimal exponent is < -4 or >= 6 (Go uses precision 6 for that choice when printing the
  // shortest digits), so 2.2736896e+07 and 1e-08, but 100000 and 0.0001.
  char buf[64];
  auto sci = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  CHECK(sci.ec == std::errc());
  const std::string scientific(buf, sci.ptr);
  const int exp = std::atoi(scientific.c_str() + scientific.find('e') + 1);
  if (exp < -4 || exp >= 6) return scientific;
  auto fixed = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  CHECK(fixed.ec == std::errc());
  return std::string(buf, fixed.ptr);
}

std::string escape_label_value(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string escape_help(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace ctrl
