// SPDX-License-Identifier: Apache-2.0
#include "testing/command.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace asop::testing {

std::string shell_quote(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

CommandResult run_command(const std::string& command, std::string_view input) {
  std::string full = command;
  std::string input_file;
  if (!input.empty()) {
    char path[] = "/tmp/asop-testing-input-XXXXXX";
    const int fd = ::mkstemp(path);
    if (fd < 0) throw std::runtime_error("asop::testing: cannot make a temporary file");
    ::close(fd);
    input_file = path;
    std::ofstream(input_file, std::ios::binary) << input;
    full = "(" + command + ") < " + shell_quote(input_file);
  }
  CommandResult r;
  FILE* pipe = ::popen(full.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("asop::testing: cannot run " + command);
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, pipe)) r.out.append(buf, n);
  const int status = ::pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (!input_file.empty()) std::remove(input_file.c_str());
  return r;
}

}  // namespace asop::testing
