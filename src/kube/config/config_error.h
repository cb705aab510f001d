// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <stdexcept>
#include <string>

namespace kube {

// A configuration problem found at start-up (kubeconfig, in-cluster files, exec plugin). The binary
// prints what() and exits with code 2, so the message is always ONE line that names the file,
// context, user or field at fault. Messages never contain token, password, key or certificate
// content: callers only pass names and paths.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(const std::string& message) : std::runtime_error(one_line(message)) {}

 private:
  // Embedded text (a YAML parser message, a plugin's install hint) may span lines.
  static std::string one_line(std::string s) {
    for (char& c : s) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    return s;
  }
};

}  // namespace kube
