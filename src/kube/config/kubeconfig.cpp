// SPDX-License-Identifier: Apache-2.0
#include "kube/config/kubeconfig.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <glog/logging.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>

#include "kube/config/config_error.h"
#include "kube/config/proxy_env.h"
#include "kube/core/resource_path.h"
#include "kube/core/text.h"

namespace kube {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kExecV1 = "client.authentication.k8s.io/v1";
constexpr std::string_view kExecV1beta1 = "client.authentication.k8s.io/v1beta1";

// Bounds a read so a path to /dev/zero or a huge file cannot exhaust memory at start-up.
constexpr std::size_t kMaxConfigFileBytes = 16 << 20;

std::string quoted(const std::string& s) {
  return "\"" + s + "\"";
}

std::string errno_text(int err) {
  return std::strerror(err);
}

// ---- YAML access. Every structural error names the file and the 1-based line. ----

[[noreturn]] void fail_at(const std::string& file, const YAML::Node& node, const std::string& msg) {
  throw ConfigError("kubeconfig " + file + " line " + std::to_string(node.Mark().line + 1) + ": " +
                    msg);
}

bool present(const YAML::Node& n) {
  return n.IsDefined() && !n.IsNull();
}

// A child of a map node; undefined when `map` is absent or null.
YAML::Node child(const YAML::Node& map, const char* key, const std::string& file) {
  if (!present(map)) return YAML::Node(YAML::NodeType::Undefined);
  if (!map.IsMap()) fail_at(file, map, std::string("expected a map around ") + quoted(key));
  return map[key];
}

std::string get_string(const YAML::Node& map, const char* key, const std::string& file) {
  const YAML::Node n = child(map, key, file);
  if (!present(n)) return {};
  if (!n.IsScalar()) fail_at(file, n, std::string(key) + " must be a string");
  return n.Scalar();
}

bool get_bool(const YAML::Node& map, const char* key, const std::string& file) {
  const YAML::Node n = child(map, key, file);
  if (!present(n)) return false;
  bool value = false;
  if (!n.IsScalar() || !YAML::convert<bool>::decode(n, value)) {
    fail_at(file, n, std::string(key) + " must be true or false");
  }
  return value;
}

std::vector<std::string> get_string_list(const YAML::Node& map, const char* key,
                                         const std::string& file) {
  std::vector<std::string> out;
  const YAML::Node n = child(map, key, file);
  if (!present(n)) return out;
  if (!n.IsSequence()) fail_at(file, n, std::string(key) + " must be a list of strings");
  for (const YAML::Node& item : n) {
    if (!item.IsScalar()) fail_at(file, item, std::string(key) + " must be a list of strings");
    out.push_back(item.Scalar());
  }
  return out;
}

// The keys of `map` outside `known`, each as `"key" (line N)`. An unknown field would otherwise be
// ignored, and the operator would run with a meaning the kubeconfig does not have.
std::vector<std::string> unknown_fields(const YAML::Node& map,
                                        std::initializer_list<std::string_view> known) {
  std::vector<std::string> out;
  if (!present(map) || !map.IsMap()) return out;
  for (const auto& kv : map) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "(not a string)";
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    out.push_back(quoted(key) + " (line " + std::to_string(kv.first.Mark().line + 1) + ")");
  }
  return out;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out;
}

// Refuses, at once, unknown keys of a map every use of the file reads (top level, list entries).
void refuse_unknown(const YAML::Node& map, std::initializer_list<std::string_view> known,
                    const std::string& file, const std::string& where) {
  const auto unknown = unknown_fields(map, known);
  if (!unknown.empty()) {
    fail_at(file, map, where + ": field " + join(unknown) + " is not supported");
  }
}

// Calls `each(name, body)` for every entry of a named list (clusters, users, contexts), rejecting
// duplicates as client-go's conversion does.
template <typename F>
void for_each_named(const YAML::Node& root, const char* list, const char* body_key,
                    const std::string& file, F each) {
  const YAML::Node n = child(root, list, file);
  if (!present(n)) return;
  if (!n.IsSequence()) fail_at(file, n, std::string(list) + " must be a list");
  std::set<std::string> seen;
  for (const YAML::Node& item : n) {
    if (!item.IsMap()) fail_at(file, item, std::string("each entry of ") + list + " must be a map");
    const std::string name = get_string(item, "name", file);
    if (name.empty()) fail_at(file, item, std::string("an entry of ") + list + " has no name");
    refuse_unknown(item, {"name", body_key}, file,
                   std::string("entry ") + quoted(name) + " of " + list);
    if (!seen.insert(name).second) {
      fail_at(file, item, std::string("duplicate name ") + quoted(name) + " in " + list);
    }
    const YAML::Node body = item[body_key];
    if (present(body) && !body.IsMap())
      fail_at(file, body, std::string(body_key) + " must be a map");
    each(name, body);
  }
}

// client-go's ResolveLocalPaths: relative references are relative to the defining file's folder.
std::string resolve_path(const fs::path& base_dir, const std::string& p) {
  if (p.empty() || fs::path(p).is_absolute()) return p;
  return (base_dir / p).lexically_normal().string();
}

bool file_exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

// ---- Server URL. ----

bool valid_port(const std::string& p) {
  if (p.empty() || p.size() > 5 ||
      !std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  const int n = std::stoi(p);
  return n >= 1 && n <= 65535;
}

bool valid_host_name(const std::string& h) {
  return !h.empty() && std::all_of(h.begin(), h.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '.' || c == '_';
  });
}

// Fills scheme/host/port/base_path. Like client-go's DefaultServerURL, a server without a scheme
// gets https when TLS is configured (CA, client cert or insecure), else http.
void parse_server(const std::string& server, bool tls_configured, const std::string& what,
                  RestConfig& out) {
  if (server.empty()) throw ConfigError(what + " has no server");
  // userinfo could carry a password, so such a URL is never echoed back.
  const bool printable = server.find('@') == std::string::npos;
  const auto bad = [&](const std::string& why) -> ConfigError {
    return ConfigError(what + ": server " + (printable ? quoted(server) + " " : "") +
                       "is not a valid URL: " + why);
  };
  if (!printable) throw bad("user info (user@host) is not supported");

  std::string rest = server;
  std::string scheme;
  if (const auto pos = rest.find("://"); pos != std::string::npos) {
    scheme = rest.substr(0, pos);
    std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    rest = rest.substr(pos + 3);
  } else {
    scheme = tls_configured ? "https" : "http";
  }
  if (scheme != "https" && scheme != "http") throw bad("scheme must be https or http");
  if (rest.find_first_of("?#") != std::string::npos) throw bad("query and fragment not allowed");

  const auto slash = rest.find('/');
  const std::string authority = rest.substr(0, slash);
  std::string path = slash == std::string::npos ? "" : rest.substr(slash);
  while (!path.empty() && path.back() == '/') path.pop_back();

  std::string host;
  std::string port;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string::npos) throw bad("missing ']' after IPv6 address");
    host = authority.substr(1, close - 1);
    in6_addr addr{};
    if (inet_pton(AF_INET6, host.c_str(), &addr) != 1) throw bad("invalid IPv6 address");
    const std::string after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') throw bad("unexpected text after ']'");
      port = after.substr(1);
      if (!valid_port(port)) throw bad("invalid port");
    }
  } else {
    const auto colons = std::count(authority.begin(), authority.end(), ':');
    if (colons > 1) throw bad("an IPv6 address must be in brackets");
    const auto colon = authority.find(':');
    host = authority.substr(0, colon);
    if (colon != std::string::npos) {
      port = authority.substr(colon + 1);
      if (!valid_port(port)) throw bad("invalid port");
    }
    if (host.empty()) throw bad("no host");
    if (!valid_host_name(host)) throw bad("invalid host");
  }
  out.scheme = scheme;
  out.host = host;
  out.port = port.empty() ? (scheme == "https" ? "443" : "80") : port;
  out.base_path = path;
}

// The PEM text of a "-data" field (base64) or a file field; exactly one may be set.
std::string load_pem_field(const std::string& data, const std::string& data_key,
                           const std::string& path, const std::string& path_key,
                           const std::string& owner) {
  if (!data.empty() && !path.empty()) {
    throw ConfigError(owner + ": both " + data_key + " and " + path_key + " are set; use one");
  }
  if (!data.empty()) return decode_base64(data, data_key + " of " + owner);
  if (!path.empty()) return read_config_file(path, path_key + " " + path + " of " + owner);
  return {};
}

void check_exec(const ExecConfig& exec, const std::string& owner) {
  if (exec.command.empty()) throw ConfigError(owner + ": exec has no command");
  if (exec.api_version != kExecV1 && exec.api_version != kExecV1beta1) {
    throw ConfigError(owner + ": exec apiVersion " + quoted(exec.api_version) +
                      " is not supported (use " + std::string(kExecV1) + " or " +
                      std::string(kExecV1beta1) + ")");
  }
  if (exec.api_version == kExecV1 && exec.interactive_mode.empty()) {
    throw ConfigError(owner + ": exec interactiveMode must be set for " + std::string(kExecV1));
  }
  if (!exec.interactive_mode.empty() && exec.interactive_mode != "Never" &&
      exec.interactive_mode != "IfAvailable" && exec.interactive_mode != "Always") {
    throw ConfigError(owner + ": exec interactiveMode " + quoted(exec.interactive_mode) +
                      " is not one of Never, IfAvailable, Always");
  }
  // The operator has no terminal; client-go refuses Always without one too.
  if (exec.interactive_mode == "Always") {
    throw ConfigError(owner +
                      ": exec interactiveMode Always needs a terminal, which the operator "
                      "does not have");
  }
  for (const auto& [name, value] : exec.env) {
    if (name.empty()) throw ConfigError(owner + ": exec env has an entry with no name");
  }
}

// Frees OpenSSL objects on every path out.
struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;

// Never prompt for a pass phrase on the terminal: an encrypted key is an error.
int no_password(char*, int, int, void*) {
  return 0;
}

BioPtr memory_bio(const std::string& pem) {
  return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

X509Ptr first_certificate(const std::string& pem) {
  BioPtr bio = memory_bio(pem);
  return X509Ptr(PEM_read_bio_X509(bio.get(), nullptr, no_password, nullptr));
}

PkeyPtr private_key(const std::string& pem) {
  BioPtr bio = memory_bio(pem);
  return PkeyPtr(PEM_read_bio_PrivateKey(bio.get(), nullptr, no_password, nullptr));
}

}  // namespace

// ---- Shared helpers. ----

std::string read_config_file(const std::string& path, const std::string& what) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw ConfigError(what + ": cannot read: " + errno_text(errno));
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw ConfigError(what + ": cannot read: is a directory");
  }
  std::string out;
  char buf[16384];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw ConfigError(what + ": cannot read: " + errno_text(err));
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > kMaxConfigFileBytes) {
      ::close(fd);
      throw ConfigError(what + ": larger than 16 MiB");
    }
  }
  ::close(fd);
  return out;
}

std::string encode_base64(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::string decode_base64(std::string_view text, const std::string& what) {
  static const auto table = [] {
    std::array<int, 256> t{};
    t.fill(-1);
    const std::string_view alphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (std::size_t i = 0; i < alphabet.size(); ++i) {
      t[static_cast<unsigned char>(alphabet[i])] = static_cast<int>(i);
    }
    return t;
  }();
  std::string out;
  unsigned bits = 0;
  int nbits = 0;
  std::size_t symbols = 0;
  std::size_t padding = 0;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isspace(c)) continue;
    if (c == '=') {
      ++padding;
      continue;
    }
    // Data after padding, or a character outside the alphabet.
    if (padding > 0 || table[c] < 0) throw ConfigError(what + ": invalid base64");
    bits = (bits << 6) | static_cast<unsigned>(table[c]);
    nbits += 6;
    ++symbols;
    if (nbits >= 8) {
      nbits -= 8;
      out.push_back(static_cast<char>((bits >> nbits) & 0xff));
    }
  }
  if (symbols % 4 == 1 || padding > 2 || (padding > 0 && (symbols + padding) % 4 != 0)) {
    throw ConfigError(what + ": invalid base64");
  }
  return out;
}

void check_certificates_pem(const std::string& pem, const std::string& what) {
  ERR_clear_error();
  BioPtr bio = memory_bio(pem);
  int count = 0;
  while (X509Ptr cert{PEM_read_bio_X509(bio.get(), nullptr, no_password, nullptr)}) ++count;
  // The loop ends with PEM_R_NO_START_LINE at the end of the text; anything else is a bad block.
  const unsigned long err = ERR_peek_last_error();
  const bool clean_end =
      ERR_GET_LIB(err) == ERR_LIB_PEM && ERR_GET_REASON(err) == PEM_R_NO_START_LINE;
  ERR_clear_error();
  if (count == 0) throw ConfigError(what + ": no valid PEM certificate");
  if (!clean_end) throw ConfigError(what + ": contains an invalid PEM certificate");
}

void check_private_key_pem(const std::string& pem, const std::string& what) {
  ERR_clear_error();
  const bool ok = private_key(pem) != nullptr;
  ERR_clear_error();
  if (!ok) throw ConfigError(what + ": no valid unencrypted PEM private key");
}

void check_key_matches_certificate(const std::string& cert_pem, const std::string& key_pem,
                                   const std::string& what) {
  ERR_clear_error();
  const X509Ptr cert = first_certificate(cert_pem);
  const PkeyPtr key = private_key(key_pem);
  const bool ok = cert && key && X509_check_private_key(cert.get(), key.get()) == 1;
  ERR_clear_error();
  if (!ok) throw ConfigError(what + ": client certificate and key do not match");
}

// ---- Kubeconfig. ----

Kubeconfig Kubeconfig::load_file(const std::string& path) {
  std::error_code ec;
  const std::string abs = fs::absolute(path, ec).lexically_normal().string();
  const std::string file = ec ? path : abs;
  if (!file_exists(file)) throw ConfigError("kubeconfig " + file + " does not exist");
  return parse(read_config_file(file, "kubeconfig " + file), file);
}

Kubeconfig Kubeconfig::parse(std::string_view yaml, const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    // e.msg only: e.what() repeats the position, and neither contains the document's text.
    throw ConfigError("kubeconfig " + path + " line " + std::to_string(e.mark.line + 1) +
                      ": invalid YAML: " + e.msg);
  }
  Kubeconfig kc;
  kc.files_.push_back(path);
  if (!present(root)) return kc;  // an empty file is an empty config, as in client-go
  if (!root.IsMap()) fail_at(path, root, "the document must be a map (kind: Config)");

  const fs::path base = fs::path(path).parent_path();
  try {
    // preferences and extensions carry settings for kubectl and other tools, not for a client.
    refuse_unknown(root,
                   {"apiVersion", "kind", "preferences", "clusters", "users", "contexts",
                    "current-context", "extensions"},
                   path, "top level");
    kc.current_context_ = get_string(root, "current-context", path);

    for_each_named(
        root, "clusters", "cluster", path, [&](const std::string& name, const YAML::Node& b) {
          Cluster c;
          c.server = get_string(b, "server", path);
          c.certificate_authority =
              resolve_path(base, get_string(b, "certificate-authority", path));
          c.certificate_authority_data = get_string(b, "certificate-authority-data", path);
          c.insecure_skip_tls_verify = get_bool(b, "insecure-skip-tls-verify", path);
          c.tls_server_name = get_string(b, "tls-server-name", path);
          c.proxy_url = get_string(b, "proxy-url", path);
          // Responses are never compressed (no Accept-Encoding is sent), whatever this says.
          get_bool(b, "disable-compression", path);
          c.unsupported =
              unknown_fields(b, {"server", "certificate-authority", "certificate-authority-data",
                                 "insecure-skip-tls-verify", "tls-server-name", "proxy-url",
                                 "disable-compression", "extensions"});
          c.file = path;
          kc.clusters_.emplace(name, std::move(c));
        });

    for_each_named(root, "users", "user", path, [&](const std::string& name, const YAML::Node& b) {
      User u;
      u.token = get_string(b, "token", path);
      u.token_file = resolve_path(base, get_string(b, "tokenFile", path));
      u.client_certificate = resolve_path(base, get_string(b, "client-certificate", path));
      u.client_certificate_data = get_string(b, "client-certificate-data", path);
      u.client_key = resolve_path(base, get_string(b, "client-key", path));
      u.client_key_data = get_string(b, "client-key-data", path);
      u.username = get_string(b, "username", path);
      u.password = get_string(b, "password", path);
      u.impersonate.user = get_string(b, "as", path);
      u.impersonate.uid = get_string(b, "as-uid", path);
      u.impersonate.groups = get_string_list(b, "as-groups", path);
      if (const YAML::Node extra = child(b, "as-user-extra", path); present(extra)) {
        if (!extra.IsMap()) fail_at(path, extra, "as-user-extra must map keys to lists of strings");
        for (const auto& kv : extra) {
          if (!kv.first.IsScalar()) fail_at(path, kv.first, "as-user-extra keys must be strings");
          auto& values = u.impersonate.extra[kv.first.Scalar()];
          if (!present(kv.second)) continue;
          if (!kv.second.IsSequence()) {
            fail_at(path, kv.second,
                    "as-user-extra " + kv.first.Scalar() + " must be a list of strings");
          }
          for (const YAML::Node& v : kv.second) {
            if (!v.IsScalar()) {
              fail_at(path, v, "as-user-extra " + kv.first.Scalar() + " must be a list of strings");
            }
            values.push_back(v.Scalar());
          }
        }
      }
      u.unsupported = unknown_fields(
          b, {"token", "tokenFile", "client-certificate", "client-certificate-data", "client-key",
              "client-key-data", "username", "password", "as", "as-uid", "as-groups",
              "as-user-extra", "auth-provider", "exec", "extensions"});
      if (const YAML::Node ap = child(b, "auth-provider", path); present(ap)) {
        u.auth_provider = get_string(ap, "name", path);
        if (u.auth_provider.empty()) u.auth_provider = "(unnamed)";
      }
      if (const YAML::Node e = child(b, "exec", path); present(e)) {
        for (auto& field : unknown_fields(e, {"apiVersion", "command", "args", "env", "installHint",
                                              "provideClusterInfo", "interactiveMode"})) {
          u.unsupported.push_back("exec " + field);
        }
        ExecConfig exec;
        exec.api_version = get_string(e, "apiVersion", path);
        exec.command = get_string(e, "command", path);
        // A relative command with a slash is relative to the kubeconfig, as in client-go; a bare
        // name is looked up in PATH when it runs.
        if (exec.command.find('/') != std::string::npos) {
          exec.command = resolve_path(base, exec.command);
        }
        exec.args = get_string_list(e, "args", path);
        if (const YAML::Node env = child(e, "env", path); present(env)) {
          if (!env.IsSequence()) fail_at(path, env, "exec env must be a list of name/value");
          for (const YAML::Node& item : env) {
            if (!item.IsMap()) fail_at(path, item, "exec env must be a list of name/value");
            for (auto& field : unknown_fields(item, {"name", "value"})) {
              u.unsupported.push_back("exec env " + field);
            }
            exec.env.emplace_back(get_string(item, "name", path), get_string(item, "value", path));
          }
        }
        exec.install_hint = get_string(e, "installHint", path);
        exec.provide_cluster_info = get_bool(e, "provideClusterInfo", path);
        exec.interactive_mode = get_string(e, "interactiveMode", path);
        u.exec = std::move(exec);
      }
      u.file = path;
      kc.users_.emplace(name, std::move(u));
    });

    for_each_named(
        root, "contexts", "context", path, [&](const std::string& name, const YAML::Node& b) {
          Context c;
          c.cluster = get_string(b, "cluster", path);
          c.user = get_string(b, "user", path);
          c.namespace_ = get_string(b, "namespace", path);
          c.unsupported = unknown_fields(b, {"cluster", "user", "namespace", "extensions"});
          c.file = path;
          kc.contexts_.emplace(name, std::move(c));
        });
  } catch (const YAML::Exception& e) {
    throw ConfigError("kubeconfig " + path + " line " + std::to_string(e.mark.line + 1) + ": " +
                      e.msg);
  }
  return kc;
}

void Kubeconfig::merge(const Kubeconfig& later) {
  files_.insert(files_.end(), later.files_.begin(), later.files_.end());
  if (current_context_.empty()) current_context_ = later.current_context_;
  // map::insert keeps an existing entry: the first file that defines a name wins.
  clusters_.insert(later.clusters_.begin(), later.clusters_.end());
  users_.insert(later.users_.begin(), later.users_.end());
  contexts_.insert(later.contexts_.begin(), later.contexts_.end());
}

std::string Kubeconfig::source() const {
  std::string s = "kubeconfig ";
  for (std::size_t i = 0; i < files_.size(); ++i) s += (i ? ":" : "") + files_[i];
  return s;
}

RestConfig Kubeconfig::resolve(const std::string& context) const {
  const std::string name = context.empty() ? current_context_ : context;
  if (name.empty()) {
    throw ConfigError(source() +
                      ": no context selected (current-context is not set and no "
                      "--context was given)");
  }
  const auto ctx = contexts_.find(name);
  if (ctx == contexts_.end()) {
    throw ConfigError(source() + ": context " + quoted(name) + " not found" +
                      (context.empty() ? " (named by current-context)" : ""));
  }
  const Context& c = ctx->second;
  const std::string ctx_what = "context " + quoted(name) + " in kubeconfig " + c.file;
  // Fields of entries this context does not use are not checked, as kubectl ignores them too.
  const auto refuse_unsupported = [](const std::vector<std::string>& fields,
                                     const std::string& what) {
    if (fields.empty()) return;
    throw ConfigError(what + (fields.size() == 1 ? ": field " : ": fields ") + join(fields) +
                      (fields.size() == 1 ? " is" : " are") + " not supported by this operator");
  };
  refuse_unsupported(c.unsupported, ctx_what);

  RestConfig rc;
  rc.source = source() + " context " + name;
  rc.context_name = name;
  if (!c.namespace_.empty()) {
    // It becomes a URL path segment (the Lease's namespace): refuse one that would change the path.
    const std::string why = ResourcePath::from_api_version("v1", "pods")
                                .in_namespace(c.namespace_)
                                .invalid_reason(ResourcePath::Target::collection);
    if (!why.empty()) throw ConfigError(ctx_what + ": " + why);
    rc.default_namespace = c.namespace_;
  }

  // Cluster.
  if (c.cluster.empty()) throw ConfigError(ctx_what + " names no cluster");
  const auto cl = clusters_.find(c.cluster);
  if (cl == clusters_.end()) {
    throw ConfigError(ctx_what + " names cluster " + quoted(c.cluster) + ", which is not defined");
  }
  const Cluster& cluster = cl->second;
  const std::string cluster_what =
      "cluster " + quoted(c.cluster) + " in kubeconfig " + cluster.file;
  refuse_unsupported(cluster.unsupported, cluster_what);
  if (!cluster.proxy_url.empty()) {
    try {
      rc.proxy = parse_proxy_url("proxy-url", cluster.proxy_url);
    } catch (const ConfigError& e) {
      throw ConfigError(cluster_what + ": " + e.what());
    }
  }
  if (cluster.insecure_skip_tls_verify &&
      (!cluster.certificate_authority.empty() || !cluster.certificate_authority_data.empty())) {
    // client-go rejects this too: the CA would silently be ignored.
    throw ConfigError(cluster_what +
                      ": certificate-authority and insecure-skip-tls-verify cannot both be set");
  }
  rc.ca_pem = load_pem_field(cluster.certificate_authority_data, "certificate-authority-data",
                             cluster.certificate_authority, "certificate-authority", cluster_what);
  if (!rc.ca_pem.empty()) {
    check_certificates_pem(rc.ca_pem,
                           (cluster.certificate_authority_data.empty()
                                ? "certificate-authority " + cluster.certificate_authority
                                : std::string("certificate-authority-data")) +
                               " of " + cluster_what);
  }
  rc.insecure_skip_tls_verify = cluster.insecure_skip_tls_verify;
  rc.tls_server_name = cluster.tls_server_name;

  // User. A context without a user is anonymous, which only a plain http server accepts below.
  static const User kAnonymous;
  const User* user = &kAnonymous;
  std::string user_what = ctx_what + " (no user)";
  if (!c.user.empty()) {
    const auto u = users_.find(c.user);
    if (u == users_.end()) {
      throw ConfigError(ctx_what + " names user " + quoted(c.user) + ", which is not defined");
    }
    user = &u->second;
    user_what = "user " + quoted(c.user) + " in kubeconfig " + user->file;
  }
  refuse_unsupported(user->unsupported, user_what);
  if (std::string why = impersonation_problem(user->impersonate); !why.empty()) {
    throw ConfigError(user_what + ": " + why);
  }
  rc.impersonate = user->impersonate;
  if (!user->auth_provider.empty()) {
    throw ConfigError(user_what + ": auth-provider " + quoted(user->auth_provider) +
                      " is not supported; use an exec credential plugin");
  }

  const bool has_cert = !user->client_certificate.empty() || !user->client_certificate_data.empty();
  const bool has_key = !user->client_key.empty() || !user->client_key_data.empty();
  if (has_cert != has_key) {
    throw ConfigError(user_what + ": " +
                      (has_cert ? "client-certificate is set without client-key"
                                : "client-key is set without client-certificate"));
  }
  if (has_cert) {
    const std::string cert_what = user->client_certificate_data.empty()
                                      ? "client-certificate " + user->client_certificate
                                      : std::string("client-certificate-data");
    const std::string key_what = user->client_key_data.empty() ? "client-key " + user->client_key
                                                               : std::string("client-key-data");
    rc.client_cert_pem = load_pem_field(user->client_certificate_data, "client-certificate-data",
                                        user->client_certificate, "client-certificate", user_what);
    rc.client_key_pem = load_pem_field(user->client_key_data, "client-key-data", user->client_key,
                                       "client-key", user_what);
    check_certificates_pem(rc.client_cert_pem, cert_what + " of " + user_what);
    check_private_key_pem(rc.client_key_pem, key_what + " of " + user_what);
    check_key_matches_certificate(rc.client_cert_pem, rc.client_key_pem,
                                  cert_what + " and " + key_what + " of " + user_what);
    if (user->client_certificate_data.empty()) rc.client_cert_file = user->client_certificate;
    if (user->client_key_data.empty()) rc.client_key_file = user->client_key;
  }

  const bool has_token = !user->token.empty() || !user->token_file.empty();
  const bool has_basic = !user->username.empty() || !user->password.empty();
  if (has_token && has_basic) {
    throw ConfigError(user_what +
                      ": more than one authentication method (token and "
                      "username/password); only one is allowed");
  }
  if (!user->password.empty() && user->username.empty()) {
    throw ConfigError(user_what + ": password is set without username");
  }
  rc.token = user->token;
  // As in client-go, a token wins over tokenFile. The file is read once now so a wrong path fails
  // at start-up; TokenSource re-reads it later.
  if (rc.token.empty() && !user->token_file.empty()) {
    const std::string what = "tokenFile " + user->token_file + " of " + user_what;
    if (trim(read_config_file(user->token_file, what)).empty()) {
      throw ConfigError(what + ": file is empty");
    }
    rc.token_file = user->token_file;
  }
  rc.username = user->username;
  rc.password = user->password;
  if (user->exec) {
    check_exec(*user->exec, user_what);
    rc.exec = user->exec;
  }

  const bool tls_configured = !rc.ca_pem.empty() || has_cert || rc.insecure_skip_tls_verify;
  parse_server(cluster.server, tls_configured, cluster_what, rc);

  if (rc.scheme == "https" && !has_cert && !has_token && !has_basic && !rc.exec) {
    throw ConfigError(user_what + ": no usable credentials for " + rc.scheme + "://" +
                      rc.authority() +
                      " (set token, tokenFile, client-certificate and client-key, "
                      "username/password or exec)");
  }
  return rc;
}

// ---- Precedence. ----

namespace {

RestConfig load_unchecked(const LoadOptions& options) {
  if (!options.explicit_path.empty()) {
    if (!file_exists(options.explicit_path)) {
      throw ConfigError("kubeconfig " + options.explicit_path +
                        " (from --kubeconfig) does not exist");
    }
    return Kubeconfig::load_file(options.explicit_path).resolve(options.context);
  }

  if (const auto list = options.env("KUBECONFIG"); list && !list->empty()) {
    std::vector<std::string> paths;
    std::size_t start = 0;
    while (start <= list->size()) {
      const auto end = std::min(list->find(':', start), list->size());
      std::string p = list->substr(start, end - start);
      if (!p.empty() && std::find(paths.begin(), paths.end(), p) == paths.end()) {
        paths.push_back(std::move(p));
      }
      start = end + 1;
    }
    std::optional<Kubeconfig> merged;
    for (const std::string& p : paths) {
      if (!file_exists(p)) {
        VLOG(1) << "KUBECONFIG entry " << p << " does not exist; skipped";
        continue;
      }
      Kubeconfig kc = Kubeconfig::load_file(p);
      if (merged) {
        merged->merge(kc);
      } else {
        merged = std::move(kc);
      }
    }
    if (merged) return merged->resolve(options.context);
    if (in_cluster_possible(options.env, options.in_cluster_root)) {
      return load_in_cluster_config(options.env, options.in_cluster_root);
    }
    throw ConfigError("KUBECONFIG=" + *list +
                      ": none of these files exists, and no in-cluster service account");
  }

  if (in_cluster_possible(options.env, options.in_cluster_root)) {
    if (!options.context.empty()) {
      LOG(WARNING) << "--context " << options.context << " ignored: using the in-cluster config";
    }
    return load_in_cluster_config(options.env, options.in_cluster_root);
  }

  std::string home;
  if (options.home_dir) {
    home = *options.home_dir;
  } else if (const auto h = options.env("HOME"); h && !h->empty()) {
    home = *h;
  } else if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_dir) {
    home = pw->pw_dir;
  }
  const std::string path = home.empty() ? std::string("~/.kube/config") : home + "/.kube/config";
  if (!home.empty() && file_exists(path)) {
    return Kubeconfig::load_file(path).resolve(options.context);
  }
  throw ConfigError(
      "no configuration found: no --kubeconfig, KUBECONFIG is not set, no in-cluster "
      "service account, and " +
      path + " does not exist");
}

}  // namespace

RestConfig load_rest_config(const LoadOptions& options) {
  RestConfig config = load_unchecked(options);
  // As client-go: proxy-url wins; else the environment, unless NO_PROXY exempts the server.
  if (!config.proxy) {
    if (const auto var = proxy_variable(config, options.env)) {
      try {
        config.proxy = parse_proxy_url(*var, options.env(*var).value_or(""));
      } catch (const ConfigError& e) {
        throw ConfigError(std::string(e.what()) + "; unset " + *var + " or list " + config.host +
                          " in NO_PROXY (" + config.source + ")");
      }
    }
  }
  return config;
}

}  // namespace kube
