// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

// Runs a short-lived child process (a credential plugin) without blocking the io_context: its
// stdout and stderr are read through asio descriptors and its exit is polled on a timer, so
// leases, watches and probes keep being served while it runs.
//
// The child inherits nothing but stdin (/dev/null), stdout and stderr: every other descriptor is
// closed in the child before exec (Asio opens its sockets without close-on-exec, and a helper the
// plugin leaves behind must not keep our listeners bound).

namespace kube {

struct ChildSpec {
  std::string path;  // what to exec (find_command's result)
  std::vector<std::string> argv;
  std::vector<std::string> env;  // NAME=value, the whole environment
  std::chrono::milliseconds timeout{std::chrono::seconds(30)};
  std::size_t max_stdout = 1 << 20;  // more kills the child (too_big)
  std::size_t max_stderr = 4096;     // more is dropped
};

struct ChildResult {
  enum class End { exited, signaled, timed_out, too_big };
  End end = End::exited;
  int code = 0;  // exit code, or the signal number when signaled
  std::string out;
  std::string err;
};

// Spawns `spec` and awaits its end on the calling coroutine's executor. At the timeout, or when
// stdout exceeds its bound, the child is killed (SIGKILL) and reaped: no zombie is left, also when
// the coroutine is destroyed mid-run. Throws std::system_error when it cannot be spawned.
boost::asio::awaitable<ChildResult> run_child(ChildSpec spec);

// exec.LookPath with Go's exec.ErrDot rule: a command with a slash is used as given (must be an
// executable file); a bare name is looked up in `search_path`. A match through a relative entry
// (empty, ".", "bin") would run whatever the current folder holds, so it is refused: `error` says
// so and the result is empty. Also empty, with `error` empty, when the command is not found.
std::string find_command(const std::string& command, const std::string& search_path,
                         std::string& error);

}  // namespace kube
