// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kube/config/in_cluster_config.h"
#include "kube/config/rest_config.h"

namespace kube {

// Proxies as client-go reads them. Only HTTP proxies are implemented (a CONNECT tunnel, for https
// and http servers alike); any other scheme is a start-up error, never silently bypassed.

// The environment variable that names a proxy for `config`'s server, as Go's httpproxy (and so
// client-go) reads it: HTTPS_PROXY/https_proxy for an https server, HTTP_PROXY/http_proxy for an
// http one; none when the value is empty, the host is localhost or a loopback address, or NO_PROXY
// /no_proxy exempts it ("*", an IP, a CIDR, a domain and its subdomains, ".suffix", with an
// optional :port). Returns the variable's name.
std::optional<std::string> proxy_variable(const RestConfig& config, const EnvLookup& env);

// True when the NO_PROXY list `no_proxy` exempts host:port.
bool no_proxy_matches(std::string_view no_proxy, const std::string& host, const std::string& port);

// Parses the proxy `url` that `what` (proxy-url, HTTPS_PROXY) names: [http://][user[:password]@]
// host[:port][/], port 80 by default, user info (percent-decoded) as basic auth. Throws a one-line
// ConfigError for another scheme (https, socks5) or a malformed URL; the message names the scheme,
// never the URL, which may carry a password.
HttpProxy parse_proxy_url(std::string_view what, std::string_view url);

}  // namespace kube
