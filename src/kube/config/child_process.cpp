// SPDX-License-Identifier: Apache-2.0
#include "kube/config/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cerrno>
#include <optional>
#include <system_error>

namespace kube {

namespace asio = boost::asio;
using asio::awaitable;
using std::chrono::steady_clock;

namespace {

constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);

std::system_error sys_error(int err, const std::string& what) {
  return std::system_error(err, std::generic_category(), what);
}

// Closes a descriptor once.
struct Fd {
  int fd = -1;
  Fd() = default;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  int release() { return std::exchange(fd, -1); }
};

struct SpawnFileActions {
  posix_spawn_file_actions_t actions;
  SpawnFileActions() { posix_spawn_file_actions_init(&actions); }
  ~SpawnFileActions() { posix_spawn_file_actions_destroy(&actions); }
};

// A spawned child until it is reaped. Destroyed unreaped (the coroutine was torn down mid-run,
// e.g. at shutdown), it kills and reaps the child so no zombie or stray plugin outlives us.
class Child {
 public:
  explicit Child(pid_t pid) : pid_(pid) {}
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  void kill() {
    if (pid_ > 0) ::kill(pid_, SIGKILL);
  }
  // The wait status once the child has exited (it is reaped then), else none.
  std::optional<int> try_reap() {
    int status = 0;
    pid_t r;
    do {
      r = ::waitpid(pid_, &status, WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r == 0) return std::nullopt;
    if (r < 0) {
      const int err = errno;
      pid_ = -1;
      throw sys_error(err, "waitpid");
    }
    pid_ = -1;
    return status;
  }

 private:
  pid_t pid_;
};

// Reads `d` to EOF, keeping at most `limit` bytes; `over` tells whether more came.
awaitable<void> drain(asio::posix::stream_descriptor& d, std::string& into, std::size_t limit,
                      bool stop_when_over, bool& over) {
  char buf[8192];
  for (;;) {
    auto [ec, n] = co_await d.async_read_some(asio::buffer(buf), kAwait);
    if (ec) co_return;  // EOF, or cancelled at the deadline
    const std::size_t room = limit - std::min(limit, into.size());
    into.append(buf, std::min(n, room));
    if (n > room) {
      over = true;
      if (stop_when_over) co_return;
    }
  }
}

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::string find_command(const std::string& command, const std::string& search_path,
                         std::string& error) {
  error.clear();
  if (command.find('/') != std::string::npos) return is_executable_file(command) ? command : "";
  std::size_t start = 0;
  while (start <= search_path.size()) {
    const auto end = std::min(search_path.find(':', start), search_path.size());
    const std::string dir = search_path.substr(start, end - start);
    start = end + 1;
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + command;
    if (!is_executable_file(candidate)) continue;
    if (dir.empty() || dir.front() != '/') {
      // Go's exec.ErrDot: the first match decides, and a relative one is refused, not skipped.
      error = "resolves to " + candidate + " through the relative PATH entry \"" + dir +
              "\", which is refused (name the command by absolute path or remove the entry)";
      return "";
    }
    return candidate;
  }
  return "";
}

awaitable<ChildResult> run_child(ChildSpec spec) {
  using namespace asio::experimental::awaitable_operators;
  auto ex = co_await asio::this_coro::executor;

  std::vector<char*> argv;
  for (std::string& a : spec.argv) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (std::string& e : spec.env) envp.push_back(e.data());
  envp.push_back(nullptr);

  // O_CLOEXEC keeps our ends out of the child; dup2 onto 1 and 2 clears the flag there.
  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) throw sys_error(errno, "pipe");
  Fd out_r, out_w, err_r, err_w;
  out_r.fd = out_pipe[0];
  out_w.fd = out_pipe[1];
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) throw sys_error(errno, "pipe");
  err_r.fd = err_pipe[0];
  err_w.fd = err_pipe[1];

  SpawnFileActions fa;
  posix_spawn_file_actions_addopen(&fa.actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa.actions, out_w.fd, 1);
  posix_spawn_file_actions_adddup2(&fa.actions, err_w.fd, 2);
  // Whatever else is open (sockets, listeners, files opened without O_CLOEXEC) stays with us.
  if (const int rc = posix_spawn_file_actions_addclosefrom_np(&fa.actions, 3); rc != 0) {
    throw sys_error(rc, "posix_spawn_file_actions_addclosefrom_np");
  }
  pid_t pid = -1;
  if (const int rc =
          ::posix_spawn(&pid, spec.path.c_str(), &fa.actions, nullptr, argv.data(), envp.data());
      rc != 0) {
    throw sys_error(rc, "cannot run " + spec.path);
  }
  Child child(pid);
  out_w.reset();
  err_w.reset();
  asio::posix::stream_descriptor out(ex, out_r.release());
  asio::posix::stream_descriptor err(ex, err_r.release());

  ChildResult result;
  const auto deadline = steady_clock::now() + spec.timeout;
  bool too_big = false;
  bool err_over = false;
  bool timed_out = false;
  auto read_stdout = [&]() -> awaitable<void> {
    co_await drain(out, result.out, spec.max_stdout, true, too_big);
    if (too_big) child.kill();
  };
  asio::steady_timer timer(ex, deadline);
  auto read =
      co_await ((read_stdout() && drain(err, result.err, spec.max_stderr, false, err_over)) ||
                timer.async_wait(kAwait));
  if (read.index() == 1) {
    timed_out = true;
    child.kill();
  }
  out.close();
  err.close();

  // The pipes close as the child exits; poll briefly for its exit status, within the deadline.
  auto delay = std::chrono::milliseconds(1);
  int status = 0;
  for (;;) {
    if (auto s = child.try_reap()) {
      status = *s;
      break;
    }
    if (!timed_out && steady_clock::now() >= deadline) {
      timed_out = true;
      child.kill();
    }
    timer.expires_after(delay);
    co_await timer.async_wait(kAwait);
    delay = std::min(delay * 2, std::chrono::milliseconds(50));
  }

  if (timed_out) {
    result.end = ChildResult::End::timed_out;
  } else if (too_big) {
    result.end = ChildResult::End::too_big;
  } else if (WIFSIGNALED(status)) {
    result.end = ChildResult::End::signaled;
    result.code = WTERMSIG(status);
  } else {
    result.end = ChildResult::End::exited;
    result.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  co_return result;
}

}  // namespace kube
