// SPDX-License-Identifier: Apache-2.0
#include "kube/config/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/temp_dir.h"

namespace asio = boost::asio;
namespace fs = std::filesystem;
using kube::ChildResult;
using kube::ChildSpec;
using kube::testing::TempDir;
using namespace std::chrono_literals;

namespace {

ChildResult run(const std::string& script, std::chrono::milliseconds timeout = 10s,
                std::size_t max_stdout = 1 << 20) {
  ChildSpec spec;
  spec.path = "/bin/sh";
  spec.argv = {"sh", "-c", script};
  spec.env = {"PATH=/usr/bin:/bin"};
  spec.timeout = timeout;
  spec.max_stdout = max_stdout;
  spec.max_stderr = 10;
  asio::io_context io;
  auto result = asio::co_spawn(io, kube::run_child(spec), asio::use_future);
  io.run();
  return result.get();
}

// No child of ours is left unreaped (a zombie) or still running.
bool no_children() {
  int status = 0;
  return ::waitpid(-1, &status, WNOHANG) < 0 && errno == ECHILD;
}

// An executable file at `rel` under `dir`.
void executable(const TempDir& dir, const std::string& rel) {
  const fs::path file = fs::path(dir.path) / rel;
  fs::create_directories(file.parent_path());
  std::ofstream(file) << "#!/bin/sh\n";
  fs::permissions(file, fs::perms::owner_all);
}

// Runs with the current directory set to `dir`, restored after.
struct InDir {
  fs::path old = fs::current_path();
  explicit InDir(const fs::path& dir) { fs::current_path(dir); }
  ~InDir() { fs::current_path(old); }
};

}  // namespace

TEST_CASE("run_child: exit code, signal, output bounds", "[child]") {
  const auto ok = run("echo out; echo err-that-is-long >&2");
  CHECK(ok.end == ChildResult::End::exited);
  CHECK(ok.code == 0);
  CHECK(ok.out == "out\n");
  CHECK(ok.err == "err-that-i");  // max_stderr

  const auto failed = run("exit 7");
  CHECK(failed.end == ChildResult::End::exited);
  CHECK(failed.code == 7);

  const auto killed = run("kill -TERM $$");
  CHECK(killed.end == ChildResult::End::signaled);
  CHECK(killed.code == SIGTERM);

  const auto big = run("while :; do echo 0123456789; done", 10s, 100);
  CHECK(big.end == ChildResult::End::too_big);
  CHECK(big.out.size() == 100);
  CHECK(no_children());
}

TEST_CASE("run_child kills and reaps a child past its timeout", "[child]") {
  const auto start = std::chrono::steady_clock::now();
  const auto slow = run("exec sleep 30", 200ms);
  CHECK(slow.end == ChildResult::End::timed_out);
  CHECK(std::chrono::steady_clock::now() - start < 5s);
  CHECK(no_children());
}

TEST_CASE("a child inherits no descriptor: a helper it leaves behind holds none of our ports",
          "[child]") {
  asio::io_context io;
  // Asio opens sockets without close-on-exec; so does a plain open().
  asio::ip::tcp::acceptor listener(io, {asio::ip::make_address("127.0.0.1"), 0});
  const auto endpoint = listener.local_endpoint();
  const int file = ::open("/dev/null", O_RDONLY);
  REQUIRE(file >= 0);
  REQUIRE((::fcntl(listener.native_handle(), F_GETFD) & FD_CLOEXEC) == 0);

  const auto r = run("ls /proc/$$/fd; sleep 30 </dev/null >/dev/null 2>&1 & echo helper $!");
  ::close(file);
  REQUIRE(r.end == ChildResult::End::exited);
  std::istringstream lines(r.out);
  std::string line;
  std::vector<std::string> fds;
  pid_t helper = -1;
  while (std::getline(lines, line)) {
    if (line.starts_with("helper ")) {
      helper = std::stoi(line.substr(7));
    } else {
      fds.push_back(line);
    }
  }
  REQUIRE(helper > 0);
  CHECK(fds == std::vector<std::string>{"0", "1", "2"});

  // With the listener closed here, its port is free again: the helper does not hold it.
  listener.close();
  asio::ip::tcp::acceptor again(io);
  again.open(endpoint.protocol());
  boost::system::error_code ec;
  again.bind(endpoint, ec);
  CHECK_FALSE(ec);
  ::kill(helper, SIGKILL);
}

TEST_CASE("find_command: PATH search refuses relative entries, as Go's exec.ErrDot", "[child]") {
  TempDir dir;
  executable(dir, "abs/tool");
  executable(dir, "tool");
  const std::string abs = dir.path + "/abs";
  std::string error;

  CHECK(kube::find_command("tool", "/nonexistent:" + abs, error) == abs + "/tool");
  CHECK(error.empty());
  CHECK(kube::find_command("absent", abs, error).empty());
  CHECK(error.empty());

  InDir in(dir.path);
  // An empty entry (leading, trailing or doubled colon) is the current folder: refused when it
  // holds the command, even if a later absolute entry has it too.
  for (const std::string& path :
       std::vector<std::string>{":" + abs, "/x::" + abs, "/x:", ".:" + abs}) {
    CHECK(kube::find_command("tool", path, error).empty());
    CHECK_THAT(error, Catch::StartsWith("resolves to ./tool through the relative PATH entry"));
  }
  CHECK(kube::find_command("tool", "abs", error).empty());
  CHECK(error.find("abs/tool through the relative PATH entry \"abs\"") != std::string::npos);
  // A relative entry without the command is passed over.
  CHECK(kube::find_command("tool", "empty-dir:" + abs, error) == abs + "/tool");
  CHECK(error.empty());
  // A command with a slash is the user's explicit choice.
  CHECK(kube::find_command("./tool", abs, error) == "./tool");
}
