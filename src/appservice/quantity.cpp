// SPDX-License-Identifier: Apache-2.0
#include "appservice/quantity.h"

#include <cmath>
#include <string>
#include <utility>

namespace appservice {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

std::optional<long double> suffix_multiplier(std::string_view suffix) {
  static constexpr std::pair<std::string_view, long double> kSuffixes[] = {
      {"", 1.0L},      {"n", 1e-9L},    {"u", 1e-6L},    {"m", 1e-3L},
      {"k", 1e3L},     {"M", 1e6L},     {"G", 1e9L},     {"T", 1e12L},
      {"P", 1e15L},    {"E", 1e18L},    {"Ki", 1024.0L}, {"Mi", 1048576.0L},
      {"Gi", 0x1p30L}, {"Ti", 0x1p40L}, {"Pi", 0x1p50L}, {"Ei", 0x1p60L},
  };
  for (const auto& [name, factor] : kSuffixes) {
    if (name == suffix) return factor;
  }
  // Decimal exponent: e3, E-2, e+6.
  if (suffix.size() >= 2 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    std::string_view exponent = suffix.substr(1);
    bool negative = exponent[0] == '-';
    if (exponent[0] == '+' || exponent[0] == '-') exponent.remove_prefix(1);
    if (exponent.empty() || exponent.size() > 4) return std::nullopt;
    int value = 0;
    for (char c : exponent) {
      if (!is_digit(c)) return std::nullopt;
      value = value * 10 + (c - '0');
    }
    return std::pow(10.0L, negative ? -value : value);
  }
  return std::nullopt;
}

}  // namespace

std::optional<long double> parse_quantity(std::string_view text) {
  bool negative = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  std::size_t end = 0;
  bool digits = false, dot = false;
  long double mantissa = 0, scale = 1;
  for (; end < text.size(); ++end) {
    char c = text[end];
    if (is_digit(c)) {
      digits = true;
      if (dot) {
        scale /= 10;
        mantissa += (c - '0') * scale;
      } else {
        mantissa = mantissa * 10 + (c - '0');
      }
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  if (!digits) return std::nullopt;
  auto multiplier = suffix_multiplier(text.substr(end));
  if (!multiplier) return std::nullopt;
  long double value = mantissa * *multiplier;
  return negative ? -value : value;
}

bool quantities_equal(std::string_view a, std::string_view b) {
  if (a == b) return true;
  auto x = parse_quantity(a), y = parse_quantity(b);
  if (!x || !y) return false;
  // The API server rounds up to nano units; compare there, with room for binary rounding.
  long double nx = std::ceil(*x * 1e9L - 1e-6L), ny = std::ceil(*y * 1e9L - 1e-6L);
  return std::fabs(nx - ny) <= 1e-12L * std::fmax(std::fabs(nx), std::fabs(ny));
}

}  // namespace appservice
