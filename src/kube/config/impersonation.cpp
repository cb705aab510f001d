// SPDX-License-Identifier: Apache-2.0
#include "kube/config/impersonation.h"

#include <cctype>
#include <cstdio>
#include <string_view>

namespace kube {

namespace {

// RFC 7230 tchar.
bool token_char(unsigned char c) {
  return std::isalnum(c) ||
         std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
}

std::string escape_header_key(const std::string& key) {
  std::string out;
  for (const char ch : key) {
    const auto c = static_cast<unsigned char>(ch);
    if (token_char(c) && c != '%') {
      out.push_back(ch);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      out += hex;
    }
  }
  return out;
}

bool has_control_char(const std::string& s) {
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\t') || c == 0x7f) return true;
  }
  return false;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> impersonation_headers(const Impersonation& as) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!as.user.empty()) out.emplace_back("Impersonate-User", as.user);
  if (!as.uid.empty()) out.emplace_back("Impersonate-Uid", as.uid);
  for (const auto& group : as.groups) out.emplace_back("Impersonate-Group", group);
  for (const auto& [key, values] : as.extra) {
    const std::string name = "Impersonate-Extra-" + escape_header_key(key);
    for (const auto& value : values) out.emplace_back(name, value);
  }
  return out;
}

std::string impersonation_problem(const Impersonation& as) {
  if (as.user.empty() && !as.empty()) {
    return "as-groups, as-uid and as-user-extra need as (the user to impersonate)";
  }
  if (has_control_char(as.user)) return "as contains a control character";
  if (has_control_char(as.uid)) return "as-uid contains a control character";
  for (const auto& group : as.groups) {
    if (has_control_char(group)) return "as-groups has an entry with a control character";
  }
  for (const auto& [key, values] : as.extra) {
    if (key.empty()) return "as-user-extra has an empty key";
    for (const auto& value : values) {
      if (has_control_char(value)) {
        return "as-user-extra " + key + " has a value with a control character";
      }
    }
  }
  return {};
}

}  // namespace kube
