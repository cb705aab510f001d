#include "kube/exec_credential.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <openssl/evp.h>
#include <poll.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

#include "kube/config_error.h"
#include "kube/kubeconfig.h"

extern char** environ;

namespace kube {
namespace {

using std::chrono::steady_clock;

constexpr std::size_t kStderrKeep = 4096;
constexpr std::size_t kStderrLineMax = 200;

std::string quoted(const std::string& s) {
  return "\"" + s + "\"";
}

std::string plugin_what(const RestConfig& config) {
  return "exec plugin " + quoted(config.exec->command) + " (" + config.source + ")";
}

std::string base64(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

// The first line of the plugin's stderr, bounded: enough to say why it failed.
std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.size() > kStderrLineMax) line = line.substr(0, kStderrLineMax) + "...";
  return line;
}

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// exec.LookPath: a name with a slash is used as is (the kubeconfig loader already made it
// absolute); a bare name is searched in PATH, an empty entry meaning the current folder.
std::string find_command(const std::string& command, const std::string& search_path) {
  if (command.find('/') != std::string::npos) return is_executable_file(command) ? command : "";
  std::size_t start = 0;
  while (start <= search_path.size()) {
    const auto end = std::min(search_path.find(':', start), search_path.size());
    std::string dir = search_path.substr(start, end - start);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + command;
    if (is_executable_file(candidate)) return candidate;
    start = end + 1;
  }
  return "";
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

// Closes a descriptor once.
struct Fd {
  int fd = -1;
  Fd() = default;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

struct SpawnFileActions {
  posix_spawn_file_actions_t actions;
  SpawnFileActions() { posix_spawn_file_actions_init(&actions); }
  ~SpawnFileActions() { posix_spawn_file_actions_destroy(&actions); }
};

// Waits for the child; kills it first when `kill_first`. Returns the wait status.
int reap(pid_t pid, bool kill_first) {
  if (kill_first) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
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
      w.String(base64(config.ca_pem));
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

ExecCredential run_exec_plugin(const RestConfig& config, const ExecOptions& options) {
  if (!config.exec) throw ConfigError(config.source + ": no exec plugin configured");
  const ExecConfig& exec = *config.exec;
  const std::string what = plugin_what(config);

  std::string search_path;
  if (options.search_path) {
    search_path = *options.search_path;
  } else if (const char* p = std::getenv("PATH")) {
    search_path = p;
  }
  const std::string path = find_command(exec.command, search_path);
  if (path.empty()) {
    const bool bare = exec.command.find('/') == std::string::npos;
    throw ConfigError(what + (bare ? " not found in PATH" : " not found or not executable") +
                      (exec.install_hint.empty() ? "" : "; " + exec.install_hint));
  }

  std::vector<std::string> args{exec.command};
  args.insert(args.end(), exec.args.begin(), exec.args.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env = child_environment(config);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  // O_CLOEXEC keeps our ends out of the child; dup2 onto 1 and 2 clears the flag there.
  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0)
    throw ConfigError(what + ": pipe: " + std::strerror(errno));
  Fd out_r, out_w, err_r, err_w;
  out_r.fd = out_pipe[0];
  out_w.fd = out_pipe[1];
  if (::pipe2(err_pipe, O_CLOEXEC) != 0)
    throw ConfigError(what + ": pipe: " + std::strerror(errno));
  err_r.fd = err_pipe[0];
  err_w.fd = err_pipe[1];

  SpawnFileActions fa;
  posix_spawn_file_actions_addopen(&fa.actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa.actions, out_w.fd, 1);
  posix_spawn_file_actions_adddup2(&fa.actions, err_w.fd, 2);
  pid_t pid = -1;
  if (const int rc =
          ::posix_spawn(&pid, path.c_str(), &fa.actions, nullptr, argv.data(), envp.data());
      rc != 0) {
    throw ConfigError(what + ": cannot run " + path + ": " + std::strerror(rc));
  }
  out_w.reset();
  err_w.reset();

  const auto deadline = steady_clock::now() + options.timeout;
  std::string out;
  std::string err;
  bool too_big = false;
  bool timed_out = false;
  char buf[8192];
  while (out_r.fd >= 0 || err_r.fd >= 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd fds[2] = {{out_r.fd, POLLIN, 0}, {err_r.fd, POLLIN, 0}};  // fd -1 is ignored by poll
    const int n = ::poll(fds, 2, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      Fd& fd = i == 0 ? out_r : err_r;
      const ssize_t got = ::read(fd.fd, buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        fd.reset();
        continue;
      }
      if (i == 0) {
        out.append(buf, static_cast<std::size_t>(got));
        if (out.size() > options.max_output_bytes) too_big = true;
      } else if (err.size() < kStderrKeep) {
        err.append(buf, std::min(static_cast<std::size_t>(got), kStderrKeep - err.size()));
      }
    }
    if (too_big) break;
  }

  // Both pipes are closed, but the child may still be exiting; wait for it within the deadline.
  int status = 0;
  if (timed_out || too_big) {
    status = reap(pid, true);
  } else {
    for (;;) {
      const pid_t r = ::waitpid(pid, &status, WNOHANG);
      if (r == pid || (r < 0 && errno != EINTR)) break;
      if (steady_clock::now() >= deadline) {
        timed_out = true;
        status = reap(pid, true);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  if (timed_out) {
    throw ConfigError(what + ": timed out after " + std::to_string(options.timeout.count()) +
                      " ms and was killed");
  }
  if (too_big) {
    throw ConfigError(what + ": output exceeds " + std::to_string(options.max_output_bytes) +
                      " bytes");
  }
  if (WIFSIGNALED(status)) {
    throw ConfigError(what + ": killed by signal " + std::to_string(WTERMSIG(status)));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const std::string line = first_line(err);
    throw ConfigError(what + ": exited with code " + std::to_string(WEXITSTATUS(status)) +
                      (line.empty() ? "" : ": " + line));
  }
  return parse_exec_credential(out, exec.api_version, what);
}

ExecCredentialProvider::ExecCredentialProvider(RestConfig config, Clock clock, ExecOptions options)
    : config_(std::move(config)), clock_(std::move(clock)), options_(std::move(options)) {
  CHECK(config_.exec) << "ExecCredentialProvider needs a config with exec";
}

const ExecCredential& ExecCredentialProvider::get() {
  if (cached_ && (!cached_->expiry || clock_() < *cached_->expiry)) return *cached_;
  cached_.reset();
  ExecCredential cred = run_exec_plugin(config_, options_);
  if (cred.expiry) {
    const auto left =
        std::chrono::duration_cast<std::chrono::seconds>(*cred.expiry - clock_()).count();
    VLOG(1) << "exec plugin " << config_.exec->command << " returned a credential valid for "
            << left << "s";
  } else {
    VLOG(1) << "exec plugin " << config_.exec->command << " returned a credential with no expiry";
  }
  cached_ = std::move(cred);
  return *cached_;
}

}  // namespace kube
