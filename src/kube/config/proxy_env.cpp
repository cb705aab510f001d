// SPDX-License-Identifier: Apache-2.0
#include "kube/config/proxy_env.h"

#include <algorithm>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/network_v4.hpp>
#include <boost/asio/ip/network_v6.hpp>
#include <cctype>

#include "kube/config/config_error.h"
#include "kube/config/kubeconfig.h"
#include "kube/core/text.h"

namespace kube {

namespace ip = boost::asio::ip;

namespace {

std::string lower_trimmed(std::string_view s) {
  std::string out(trim(s));
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::optional<ip::address> as_ip(const std::string& s) {
  boost::system::error_code ec;
  const auto a = ip::make_address(s, ec);
  if (ec) return std::nullopt;
  return a;
}

// "host:port", "[v6]:port", "v6", "host" -> host and port (empty when absent), as in Go.
std::pair<std::string, std::string> split_host_port(const std::string& s) {
  if (!s.empty() && s.front() == '[') {
    const auto close = s.find(']');
    if (close == std::string::npos) return {s, ""};
    const std::string rest = s.substr(close + 1);
    return {s.substr(1, close - 1), rest.size() > 1 && rest.front() == ':' ? rest.substr(1) : ""};
  }
  const auto colon = s.rfind(':');
  if (colon == std::string::npos || s.find(':') != colon) return {s, ""};  // none, or a bare v6
  return {s.substr(0, colon), s.substr(colon + 1)};
}

bool in_cidr(const std::string& cidr, const ip::address& addr) {
  boost::system::error_code ec;
  if (addr.is_v4()) {
    const auto net = ip::make_network_v4(cidr, ec);
    if (ec) return false;
    const auto host = ip::make_network_v4(addr.to_v4(), net.prefix_length());
    return host.network() == net.network();
  }
  const auto net = ip::make_network_v6(cidr, ec);
  if (ec) return false;
  const auto host = ip::make_network_v6(addr.to_v6(), net.prefix_length());
  return host.network() == net.network();
}

// RFC 3986 percent-decoding; nullopt on a malformed escape.
std::optional<std::string> percent_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out.push_back(s[i]);
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    const auto hex = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    };
    const int hi = hex(s[i + 1]), lo = hex(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

std::optional<std::string> first_set(const EnvLookup& env, const char* upper, const char* lower) {
  for (const char* name : {upper, lower}) {
    if (auto v = env(name); v && !v->empty()) return std::string(name);
  }
  return std::nullopt;
}

}  // namespace

bool no_proxy_matches(std::string_view no_proxy, const std::string& host_in,
                      const std::string& port) {
  const std::string host = lower_trimmed(host_in);
  const auto host_ip = as_ip(host);
  std::size_t start = 0;
  while (start <= no_proxy.size()) {
    const auto end = std::min(no_proxy.find(',', start), no_proxy.size());
    const std::string entry = lower_trimmed(no_proxy.substr(start, end - start));
    start = end + 1;
    if (entry.empty()) continue;
    if (entry == "*") return true;
    if (entry.find('/') != std::string::npos) {
      if (host_ip && in_cidr(entry, *host_ip)) return true;
      continue;
    }
    if (const auto entry_ip = as_ip(entry)) {  // a bare IP (a v6 one has no port form here)
      if (host_ip && *host_ip == *entry_ip) return true;
      continue;
    }
    auto [pattern, pattern_port] = split_host_port(entry);
    if (!pattern_port.empty() && pattern_port != port) continue;
    if (const auto entry_ip = as_ip(pattern)) {
      if (host_ip && *host_ip == *entry_ip) return true;
      continue;
    }
    if (pattern.rfind("*.", 0) == 0) pattern.erase(0, 1);
    if (pattern.empty()) continue;
    const bool exact_too = pattern.front() != '.';
    const std::string suffix = exact_too ? "." + pattern : pattern;
    if ((host.size() > suffix.size() &&
         host.compare(host.size() - suffix.size(), suffix.size(), suffix) == 0) ||
        (exact_too && host == pattern)) {
      return true;
    }
  }
  return false;
}

std::optional<std::string> proxy_variable(const RestConfig& config, const EnvLookup& env) {
  const auto var = config.scheme == "https" ? first_set(env, "HTTPS_PROXY", "https_proxy")
                                            : first_set(env, "HTTP_PROXY", "http_proxy");
  if (!var) return std::nullopt;
  const std::string host = lower_trimmed(config.host);
  if (host == "localhost") return std::nullopt;
  if (const auto a = as_ip(host); a && a->is_loopback()) return std::nullopt;
  for (const char* name : {"NO_PROXY", "no_proxy"}) {
    if (auto v = env(name); v && !v->empty()) {
      if (no_proxy_matches(*v, host, config.port)) return std::nullopt;
      break;
    }
  }
  return var;
}

HttpProxy parse_proxy_url(std::string_view what, std::string_view url_in) {
  const std::string w(what);
  std::string_view url = url_in;
  std::string scheme = "http";  // Go reads a proxy without a scheme as http://
  if (const auto pos = url.find("://"); pos != std::string_view::npos) {
    scheme = lower_trimmed(url.substr(0, pos));
    url.remove_prefix(pos + 3);
  }
  if (scheme != "http") {
    throw ConfigError(w + " names a" + (scheme == "https" ? "n " : " ") + scheme +
                      " proxy: scheme " + scheme +
                      " is not supported (only http:// proxies, through CONNECT)");
  }
  const auto bad = [&](const std::string& why) {
    return ConfigError(w + " is not a valid http proxy URL: " + why);
  };
  if (const auto slash = url.find_first_of("/?#"); slash != std::string_view::npos) {
    if (url.substr(slash) != "/") throw bad("a path, query or fragment is not allowed");
    url = url.substr(0, slash);
  }
  HttpProxy proxy;
  proxy.source = w;
  if (const auto at = url.rfind('@'); at != std::string_view::npos) {
    const auto userinfo = percent_decode(url.substr(0, at));
    if (!userinfo) throw bad("invalid percent-encoding in the user info");
    proxy.authorization = "Basic " + encode_base64(*userinfo);
    url.remove_prefix(at + 1);
  }
  auto [host, port] = split_host_port(std::string(url));
  if (host.empty()) throw bad("no host");
  if (host.find(':') != std::string::npos && !as_ip(host)) throw bad("invalid IPv6 address");
  if (port.empty()) port = "80";
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(port) < 1 || std::stoi(port) > 65535) {
    throw bad("invalid port");
  }
  proxy.host = host;
  proxy.port = port;
  return proxy;
}

}  // namespace kube
