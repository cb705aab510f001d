// SPDX-License-Identifier: Apache-2.0
#include "ctrl/serve/bind_address.h"

#include <charconv>
#include <stdexcept>
#include <string>

namespace ctrl {
namespace ip = boost::asio::ip;

namespace {

[[noreturn]] void bad(std::string_view text, std::string_view why) {
  throw std::invalid_argument("invalid bind address \"" + std::string(text) +
                              "\": " + std::string(why));
}

}  // namespace

std::optional<ip::tcp::endpoint> parse_bind_address(std::string_view text) {
  if (text == "0") return std::nullopt;
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) bad(text, "want host:port, :port or 0");
  std::string_view host = text.substr(0, colon);
  const std::string_view port_text = text.substr(colon + 1);

  unsigned port = 0;
  const auto [end, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc{} || end != port_text.data() + port_text.size() ||
      port > 65535) {
    bad(text, "the port must be a number from 0 to 65535");
  }

  ip::address address;
  if (host.empty()) {
    address = ip::address_v6::any();
  } else if (host == "localhost") {
    address = ip::address_v4::loopback();
  } else {
    const bool bracketed = host.size() >= 2 && host.front() == '[' && host.back() == ']';
    if (bracketed) host = host.substr(1, host.size() - 2);
    boost::system::error_code parse_ec;
    address = ip::make_address(std::string(host), parse_ec);
    // An IPv6 literal needs its brackets, or "::1:8080" would be ambiguous.
    if (parse_ec || address.is_v6() != bracketed) bad(text, "the host must be an IP address");
  }
  return ip::tcp::endpoint(address, static_cast<unsigned short>(port));
}

}  // namespace ctrl
