// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <optional>
#include <string_view>

namespace ctrl {

// A listen address in the form of controller-runtime's --metrics-bind-address and
// --health-probe-bind-address: "host:port" with an IP literal ("127.0.0.1:8080", "[::1]:8080")
// or "localhost", ":port" for every interface (the IPv6 wildcard; servers fall back to IPv4 when
// the host has no IPv6), port 0 for any free port, and "0" to disable the server (empty result).
// Throws std::invalid_argument naming the text when it is none of these: this is start-up input.
std::optional<boost::asio::ip::tcp::endpoint> parse_bind_address(std::string_view text);

}  // namespace ctrl
