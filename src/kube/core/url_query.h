// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kube {

// A URL query string built from raw keys and values, percent-encoded on output. Label and field
// selectors contain '=', ',', '!' and spaces, which must not leak into the query syntax.
class UrlQuery {
 public:
  // Appends key=value; repeated keys are kept (order is preserved).
  UrlQuery& add(std::string_view key, std::string_view value);
  // Appends only when value is not empty: convenient for optional list options.
  UrlQuery& add_if(std::string_view key, std::string_view value);

  bool empty() const { return params_.empty(); }
  // "k1=v1&k2=v2", without the leading '?'.
  std::string str() const;

  // RFC 3986: everything but unreserved characters (ALPHA DIGIT - . _ ~) becomes %XX.
  static std::string encode(std::string_view s);

 private:
  std::vector<std::pair<std::string, std::string>> params_;
};

}  // namespace kube
