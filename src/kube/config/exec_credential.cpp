// SPDX-License-Identifier: Apache-2.0
#include "kube/config/exec_credential.h"

#include <glog/logging.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <cstdlib>
#include <map>
#include <system_error>
#include <vector>

#include "kube/config/child_process.h"
#include "kube/config/config_error.h"
#include "kube/config/kubeconfig.h"

extern char** environ;

namespace kube {

namespace asio = boost::asio;
using asio::awaitable;
using std::chrono::steady_clock;
using std::chrono::system_clock;

namespace {

constexpr std::size_t kStderrKeep = 4096;
constexpr std::size_t kStderrLineMax = 200;

std::string quoted(const std::string& s) {
  return "\"" + s + "\"";
}

std::string plugin_what(const RestConfig& config) {
  return "exec plugin " + quoted(config.exec->command) + " (" + config.source + ")";
}

// The first line of the plugin's stderr, bounded: enough to say why it failed.
std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.size() > kStderrLineMax) line = line.substr(0, kStderrLineMax) + "...";
  return line;
}

// The inherited environment with exec.env layered on top (same name replaces) and
// KUBERNETES_EXEC_INFO last.
std::vector<std::string> child_environment(const RestConfig& config) {
  std::map<std::string, std::string> overrides;
  for (const auto& [name, value] : config.exec->env) overrides[name] = value;
  overrides["KUBERNETES_EXEC_INFO"] = exec_info_json(config);
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    if (!overrides.contains(name)) env.push_back(entry);
  }
  for (const auto& [name, value] : overrides) env.push_back(name + "=" + value);
  return env;
}

// Parses exactly `n` digits at s[pos], advancing pos.
bool digits(std::string_view s, std::size_t& pos, int n, int& out) {
  out = 0;
  for (int i = 0; i < n; ++i, ++pos) {
    if (pos >= s.size() || s[pos] < '0' || s[pos] > '9') return false;
    out = out * 10 + (s[pos] - '0');
  }
  return true;
}

bool expect(std::string_view s, std::size_t& pos, std::string_view chars) {
  if (pos >= s.size() || chars.find(s[pos]) == std::string_view::npos) return false;
  ++pos;
  return true;
}

}  // namespace

std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view s) {
  using namespace std::chrono;
  std::size_t pos = 0;
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  if (!digits(s, pos, 4, y) || !expect(s, pos, "-") || !digits(s, pos, 2, mo) ||
      !expect(s, pos, "-") || !digits(s, pos, 2, d) || !expect(s, pos, "Tt") ||
      !digits(s, pos, 2, h) || !expect(s, pos, ":") || !digits(s, pos, 2, mi) ||
      !expect(s, pos, ":") || !digits(s, pos, 2, sec)) {
    return std::nullopt;
  }
  nanoseconds frac{0};
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int n = 0;
    long long value = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (n < 9) {
        value = value * 10 + (s[pos] - '0');
        ++n;
      }
      ++pos;
    }
    if (n == 0) return std::nullopt;
    for (int i = n; i < 9; ++i) value *= 10;
    frac = nanoseconds(value);
  }
  minutes offset{0};
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    const int sign = s[pos] == '-' ? -1 : 1;
    ++pos;
    int oh = 0, om = 0;
    if (!digits(s, pos, 2, oh) || !expect(s, pos, ":") || !digits(s, pos, 2, om) || oh > 23 ||
        om > 59) {
      return std::nullopt;
    }
    offset = minutes(sign * (oh * 60 + om));
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  const year_month_day date{year(y), month(static_cast<unsigned>(mo)),
                            day(static_cast<unsigned>(d))};
  if (!date.ok() || h > 23 || mi > 59 || sec > 60) return std::nullopt;
  const auto local = sys_days(date) + hours(h) + minutes(mi) + seconds(sec) + frac;
  return time_point_cast<system_clock::duration>(local - offset);
}

ExecCredential parse_exec_credential(std::string_view json, std::string_view expected_api_version,
                                     const std::string& what) {
  rapidjson::Document doc;
  // The text is never echoed: it holds the credential.
  if (doc.Parse(json.data(), json.size()).HasParseError()) {
    throw ConfigError(what + ": output is not valid JSON (" +
                      rapidjson::GetParseError_En(doc.GetParseError()) + " at offset " +
                      std::to_string(doc.GetErrorOffset()) + ")");
  }
  if (!doc.IsObject()) throw ConfigError(what + ": output is not a JSON object");
  const auto string_field = [&](const rapidjson::Value& obj, const char* key,
                                const std::string& label) -> std::string {
    const auto it = obj.FindMember(key);
    if (it == obj.MemberEnd() || it->value.IsNull()) return {};
    if (!it->value.IsString()) throw ConfigError(what + ": " + label + " is not a string");
    return std::string(it->value.GetString(), it->value.GetStringLength());
  };

  const std::string api_version = string_field(doc, "apiVersion", "apiVersion");
  if (api_version != expected_api_version) {
    throw ConfigError(what + ": returned apiVersion " + quoted(api_version) + ", expected " +
                      quoted(std::string(expected_api_version)));
  }
  const std::string kind = string_field(doc, "kind", "kind");
  if (kind != "ExecCredential") {
    throw ConfigError(what + ": returned kind " + quoted(kind) + ", expected \"ExecCredential\"");
  }
  const auto status = doc.FindMember("status");
  if (status == doc.MemberEnd() || !status->value.IsObject()) {
    throw ConfigError(what + ": returned no status object");
  }
  const rapidjson::Value& st = status->value;

  ExecCredential cred;
  cred.token = string_field(st, "token", "status.token");
  cred.client_cert_pem = string_field(st, "clientCertificateData", "status.clientCertificateData");
  cred.client_key_pem = string_field(st, "clientKeyData", "status.clientKeyData");
  if (cred.client_cert_pem.empty() != cred.client_key_pem.empty()) {
    throw ConfigError(what + ": returned " +
                      (cred.client_key_pem.empty()
                           ? "clientCertificateData without clientKeyData"
                           : "clientKeyData without clientCertificateData"));
  }
  if (cred.token.empty() && cred.client_cert_pem.empty()) {
    throw ConfigError(what + ": returned neither status.token nor a client certificate and key");
  }
  if (!cred.client_cert_pem.empty()) {
    check_certificates_pem(cred.client_cert_pem, what + ": status.clientCertificateData");
    check_private_key_pem(cred.client_key_pem, what + ": status.clientKeyData");
    check_key_matches_certificate(cred.client_cert_pem, cred.client_key_pem,
                                  what + ": status.clientCertificateData and clientKeyData");
  }
  if (const std::string ts = string_field(st, "expirationTimestamp", "status.expirationTimestamp");
      !ts.empty()) {
    cred.expiry = parse_rfc3339(ts);
    if (!cred.expiry) {
      throw ConfigError(what + ": status.expirationTimestamp " + quoted(ts) + " is not RFC 3339");
    }
  }
  return cred;
}

std::string exec_info_json(const RestConfig& config) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("apiVersion");
  w.String(config.exec ? config.exec->api_version : std::string());
  w.Key("kind");
  w.String("ExecCredential");
  w.Key("spec");
  w.StartObject();
  if (config.exec && config.exec->provide_cluster_info) {
    w.Key("cluster");
    w.StartObject();
    w.Key("server");
    w.String(config.scheme + "://" + config.authority() + config.base_path);
    if (!config.tls_server_name.empty()) {
      w.Key("tls-server-name");
      w.String(config.tls_server_name);
    }
    if (config.insecure_skip_tls_verify) {
      w.Key("insecure-skip-tls-verify");
      w.Bool(true);
    }
    if (!config.ca_pem.empty()) {
      w.Key("certificate-authority-data");
      w.String(encode_base64(config.ca_pem));
    }
    w.EndObject();
  }
  // The operator has no terminal, so a plugin must never prompt.
  w.Key("interactive");
  w.Bool(false);
  w.EndObject();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

awaitable<ExecCredential> run_exec_plugin_async(RestConfig config, ExecOptions options) {
  if (!config.exec) throw ConfigError(config.source + ": no exec plugin configured");
  const ExecConfig& exec = *config.exec;
  const std::string what = plugin_what(config);

  std::string search_path;
  if (options.search_path) {
    search_path = *options.search_path;
  } else if (const char* p = std::getenv("PATH")) {
    search_path = p;
  }
  std::string lookup_error;
  const std::string path = find_command(exec.command, search_path, lookup_error);
  if (!lookup_error.empty()) throw ConfigError(what + " " + lookup_error);
  if (path.empty()) {
    const bool bare = exec.command.find('/') == std::string::npos;
    throw ConfigError(what + (bare ? " not found in PATH" : " not found or not executable") +
                      (exec.install_hint.empty() ? "" : "; " + exec.install_hint));
  }

  ChildSpec spec;
  spec.path = path;
  spec.argv.push_back(exec.command);
  spec.argv.insert(spec.argv.end(), exec.args.begin(), exec.args.end());
  spec.env = child_environment(config);
  spec.timeout = options.timeout;
  spec.max_stdout = options.max_output_bytes;
  spec.max_stderr = kStderrKeep;
  ChildResult r;
  try {
    r = co_await run_child(std::move(spec));
  } catch (const std::system_error& e) {
    throw ConfigError(what + ": " + e.what());
  }
  switch (r.end) {
    case ChildResult::End::timed_out:
      throw ConfigError(what + ": timed out after " + std::to_string(options.timeout.count()) +
                        " ms and was killed");
    case ChildResult::End::too_big:
      throw ConfigError(what + ": output exceeds " + std::to_string(options.max_output_bytes) +
                        " bytes");
    case ChildResult::End::signaled:
      throw ConfigError(what + ": killed by signal " + std::to_string(r.code));
    case ChildResult::End::exited:
      break;
  }
  if (r.code != 0) {
    const std::string line = first_line(r.err);
    throw ConfigError(what + ": exited with code " + std::to_string(r.code) +
                      (line.empty() ? "" : ": " + line));
  }
  co_return parse_exec_credential(r.out, exec.api_version, what);
}

ExecCredential run_exec_plugin(const RestConfig& config, const ExecOptions& options) {
  asio::io_context io;
  auto result = asio::co_spawn(io, run_exec_plugin_async(config, options), asio::use_future);
  io.run();
  return result.get();
}

// One plugin run, and the requests awaiting it (they wait on `signal`, cancelled at the end).
struct ExecCredentialProvider::Flight {
  Flight(const asio::any_io_executor& ex, Clock c)
      : signal(ex, steady_clock::time_point::max()), clock(std::move(c)) {}
  asio::steady_timer signal;
  Clock clock;
  bool done = false;
  system_clock::time_point finished{};  // the backoff counts from here
  Credential result;
  std::string error;
};

ExecCredentialProvider::ExecCredentialProvider(RestConfig config, Clock clock, ExecOptions options,
                                               ExecRefreshPolicy policy)
    : clock_(std::move(clock)), options_(std::move(options)), policy_(policy) {
  CHECK(config.exec) << "ExecCredentialProvider needs a config with exec";
  config_ = std::make_shared<const RestConfig>(std::move(config));
}

// A run still going on finishes on its own (it holds what it needs) and is then dropped.
ExecCredentialProvider::~ExecCredentialProvider() = default;

bool ExecCredentialProvider::running() const {
  return flight_ && !flight_->done;
}

bool ExecCredentialProvider::usable(system_clock::time_point now) const {
  return cached_ && (!cached_->expiry || now < *cached_->expiry);
}

void ExecCredentialProvider::start(const asio::any_io_executor& ex) {
  auto flight = std::make_shared<Flight>(ex, clock_);
  flight_ = flight;
  ++runs_;
  VLOG(1) << "running exec plugin " << config_->exec->command
          << (cached_ ? " (refresh ahead of expiry)" : "");
  // The run owns the config and its flight, so it may outlive this provider.
  asio::co_spawn(
      ex,
      [](std::shared_ptr<const RestConfig> config, ExecOptions options,
         std::shared_ptr<Flight> f) -> awaitable<void> {
        try {
          f->result = std::make_shared<const ExecCredential>(
              co_await run_exec_plugin_async(*config, std::move(options)));
        } catch (const std::exception& e) {
          f->error = e.what();
        }
        f->done = true;
        f->finished = f->clock();
        f->signal.cancel();
      }(config_, options_, flight),
      asio::detached);
}

void ExecCredentialProvider::settle() {
  if (!flight_ || !flight_->done) return;
  const std::shared_ptr<Flight> f = std::move(flight_);
  const auto now = f->finished;
  const std::string& command = config_->exec->command;
  if (!f->result) {
    backoff_ = backoff_.count() == 0 ? policy_.initial_backoff
                                     : std::min(backoff_ * 2, policy_.max_backoff);
    retry_at_ = now + backoff_;
    last_error_ = f->error;
    LOG_IF(WARNING, ever_succeeded_)
        << f->error << "; next run in " << backoff_.count() << " ms"
        << (usable(now) ? ", keeping the current credential until then" : "");
    return;
  }
  ever_succeeded_ = true;
  backoff_ = std::chrono::milliseconds(0);
  retry_at_ = {};
  cached_ = f->result;
  if (!cached_->expiry) {
    refresh_at_ = system_clock::time_point::max();
    VLOG(1) << "exec plugin " << command << " returned a credential with no expiry";
    return;
  }
  const auto lifetime = std::max(system_clock::duration::zero(), *cached_->expiry - now);
  const auto ahead = std::min<system_clock::duration>(lifetime / 2, policy_.max_refresh_ahead);
  refresh_at_ = std::max(*cached_->expiry - ahead, now + policy_.min_refresh_interval);
  VLOG(1) << "exec plugin " << command << " returned a credential valid for "
          << std::chrono::duration_cast<std::chrono::seconds>(lifetime).count() << "s";
}

ExecCredentialProvider::Credential ExecCredentialProvider::cached() {
  settle();
  return usable(clock_()) ? cached_ : nullptr;
}

awaitable<ExecCredentialProvider::Credential> ExecCredentialProvider::get() {
  settle();
  auto now = clock_();
  const auto ex = co_await asio::this_coro::executor;
  if (usable(now)) {
    if (now >= refresh_at_ && now >= retry_at_ && !flight_) start(ex);
    co_return cached_;
  }
  cached_.reset();
  if (!flight_) {
    if (now < retry_at_) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(retry_at_ - now);
      throw ConfigError(last_error_ + " (next run in " + std::to_string(left.count()) + " ms)");
    }
    start(ex);
  }
  const std::shared_ptr<Flight> f = flight_;
  while (!f->done) co_await f->signal.async_wait(asio::as_tuple(asio::use_awaitable));
  settle();
  if (!f->result) throw ConfigError(f->error);
  co_return f->result;
}

void ExecCredentialProvider::invalidate(const Credential& used) {
  settle();
  if (used && used == cached_) cached_.reset();
}

}  // namespace kube
