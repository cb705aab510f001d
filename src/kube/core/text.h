// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string_view>

namespace kube {

// `s` without leading and trailing whitespace (space, tab, CR, LF, FF, VT): the one trim of the
// files, headers and selectors the runtime reads. A view into `s`.
inline std::string_view trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n\f\v";
  const auto begin = s.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(kSpace) - begin + 1);
}

}  // namespace kube
