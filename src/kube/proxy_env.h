#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kube/in_cluster_config.h"
#include "kube/rest_config.h"

namespace kube {

// The operator connects to the API server directly: it implements no proxy (HTTP CONNECT or SOCKS).
// A proxy the configuration asks for is therefore a start-up error, never silently bypassed.

// The environment variable that names a proxy for `config`'s server, as Go's httpproxy (and so
// client-go) reads it: HTTPS_PROXY/https_proxy for an https server, HTTP_PROXY/http_proxy for an
// http one; none when the value is empty, the host is localhost or a loopback address, or NO_PROXY
// /no_proxy exempts it ("*", an IP, a CIDR, a domain and its subdomains, ".suffix", with an
// optional :port). Returns the variable's name.
std::optional<std::string> proxy_variable(const RestConfig& config, const EnvLookup& env);

// True when the NO_PROXY list `no_proxy` exempts host:port.
bool no_proxy_matches(std::string_view no_proxy, const std::string& host, const std::string& port);

// The one-line refusal of the proxy `url` that `what` (proxy-url, HTTPS_PROXY) names. It names the
// scheme, never the URL: it may carry a password.
std::string proxy_refusal(std::string_view what, std::string_view url);

}  // namespace kube
