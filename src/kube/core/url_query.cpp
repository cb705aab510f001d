// SPDX-License-Identifier: Apache-2.0
#include "kube/core/url_query.h"

namespace kube {

UrlQuery& UrlQuery::add(std::string_view key, std::string_view value) {
  params_.emplace_back(std::string(key), std::string(value));
  return *this;
}

UrlQuery& UrlQuery::add_if(std::string_view key, std::string_view value) {
  if (!value.empty()) add(key, value);
  return *this;
}

std::string UrlQuery::str() const {
  std::string out;
  for (const auto& [k, v] : params_) {
    if (!out.empty()) out += '&';
    out += encode(k);
    out += '=';
    out += encode(v);
  }
  return out;
}

std::string UrlQuery::encode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
  }
  return out;
}

}  // namespace kube
