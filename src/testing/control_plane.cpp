// SPDX-License-Identifier: Apache-2.0
// asop::testing::ControlPlane: one control plane per test run, attached or started under a lock.
#include "asop/testing/control_plane.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <set>
#include <stdexcept>
#include <utility>

#include "testing/command.h"

namespace asop::testing {
namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// The last lines of a log, for an error message.
std::string tail_of(const std::string& path) {
  return run_command("tail -n 15 " + shell_quote(path) + " 2>/dev/null").out;
}

int open_lock(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("asop::testing: cannot open " + path);
  return fd;
}

// No binaries and no way to build them: skipped (exit 77), or failed when the run requires them.
[[noreturn]] void unavailable(const std::string& why) {
  if (env("ASOP_TESTING_REQUIRE_CONTROLPLANE") == "1") {
    throw std::runtime_error(
        "asop::testing: no control plane (ASOP_TESTING_REQUIRE_CONTROLPLANE=1): " + why);
  }
  std::cerr << "asop::testing: SKIPPED: no control plane: " << why << "\n" << std::flush;
  std::exit(77);
}

}  // namespace

struct ControlPlane::Impl {
  std::string dir;
  std::string kubectl = "kubectl";  // the server's own when the kit started it
  std::string base;                 // the lock folder of a control plane this process shares
  int users_fd = -1;                // a shared lock on base/users.lock while this process uses it
  mutable std::mutex mutex;
  mutable std::set<std::string> crds;  // apply_crds() paths done

  ~Impl() {
    if (owned) {
      run_command("bash " + shell_quote(scripts + "/down.sh") + " " + shell_quote(dir) +
                  " --purge >/dev/null 2>&1");
      std::remove((dir + ".up.log").c_str());
      return;
    }
    if (users_fd < 0) return;
    // The last user stops it: under the start lock (no one attaches meanwhile), drop our shared
    // lock and try an exclusive one; it is granted only when no other process holds one.
    const int start_fd = open_lock(base + "/start.lock");
    ::flock(start_fd, LOCK_EX);
    ::close(users_fd);
    const int probe = open_lock(base + "/users.lock");
    if (::flock(probe, LOCK_EX | LOCK_NB) == 0) {
      run_command("bash " + shell_quote(scripts) + "/down.sh " + shell_quote(dir) +
                  " --purge >/dev/null 2>&1");
    }
    ::close(probe);
    ::close(start_fd);
  }

  std::string scripts;
  bool owned = false;  // a private control plane: stopped and removed with this
};

ControlPlane::ControlPlane(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ControlPlane::~ControlPlane() = default;

namespace {

std::string elapsed_since(std::chrono::steady_clock::time_point start) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - start)
                            .count()) +
         " ms";
}

// Where the scripts are, and the folder of this user's kit control planes (made).
void locate(ControlPlane::Impl& impl, std::string_view scripts_dir) {
  impl.scripts = env("ASOP_CONTROLPLANE_SCRIPTS");
  if (impl.scripts.empty()) impl.scripts = std::string(scripts_dir);
  if (impl.scripts.empty() || !std::filesystem::exists(impl.scripts + "/up.sh")) {
    unavailable("no control plane scripts (ASOP_CONTROLPLANE_SCRIPTS='" + impl.scripts +
                "') and no ASOP_CONTROLPLANE_DIR");
  }
  std::string runtime = env("XDG_RUNTIME_DIR");
  if (runtime.empty() || !std::filesystem::is_directory(runtime)) runtime = "/tmp";
  impl.base = runtime + "/asop-testing-" + std::to_string(::getuid());
  std::filesystem::create_directories(impl.base);
}

// The binaries, built on first use; skipped (or failed) when they cannot be.
void build(ControlPlane::Impl& impl) {
  const std::string build_log = impl.base + "/build.log";
  auto built = run_command("bash " + shell_quote(impl.scripts + "/build.sh") + " 2>" +
                           shell_quote(build_log));
  if (!built.ok()) {
    if (!run_command("command -v go >/dev/null").ok()) {
      if (impl.users_fd >= 0) ::close(impl.users_fd);
      impl.users_fd = -1;
      unavailable("the control plane binaries are not built and Go is not installed to build them");
    }
    throw std::runtime_error("asop::testing: building the control plane failed:\n" +
                             tail_of(build_log));
  }
  impl.kubectl = trimmed(built.out) + "/client/kubectl";
}

// up.sh: starts what is not running in impl.dir and waits until it is ready.
void up(const ControlPlane::Impl& impl) {
  const std::string up_log = impl.dir + ".up.log";
  auto started = run_command("bash " + shell_quote(impl.scripts + "/up.sh") + " " +
                             shell_quote(impl.dir) + " >" + shell_quote(up_log) + " 2>&1");
  if (!started.ok()) {
    throw std::runtime_error("asop::testing: starting the control plane in " + impl.dir +
                             " failed:\n" + tail_of(up_log));
  }
}

}  // namespace

ControlPlane& ControlPlane::shared(std::string_view scripts_dir) {
  static std::mutex mutex;
  static std::unique_ptr<ControlPlane> shared;
  std::lock_guard lock(mutex);
  if (shared) return *shared;

  const auto start = std::chrono::steady_clock::now();
  if (const std::string fixture = env("ASOP_CONTROLPLANE_DIR"); !fixture.empty()) {
    shared = attach(fixture);
    return *shared;
  }
  auto impl = std::make_unique<Impl>();
  locate(*impl, scripts_dir);
  impl->dir = impl->base + "/shared";

  const int start_fd = open_lock(impl->base + "/start.lock");
  ::flock(start_fd, LOCK_EX);
  struct Unlock {
    int fd;
    ~Unlock() { ::close(fd); }
  } unlock{start_fd};
  impl->users_fd = open_lock(impl->base + "/users.lock");
  ::flock(impl->users_fd, LOCK_SH);
  build(*impl);
  const std::string kubeconfig = impl->dir + "/kubeconfig";
  const bool running =
      std::filesystem::exists(kubeconfig) &&
      run_command(shell_quote(impl->kubectl) + " --kubeconfig " + shell_quote(kubeconfig) +
                  " --request-timeout=3s get --raw=/readyz >/dev/null 2>&1")
          .ok();
  if (!running) up(*impl);
  std::cerr << "asop::testing: " << (running ? "attached to" : "started")
            << " the shared control plane in " << impl->dir << " in " << elapsed_since(start)
            << "\n";
  shared.reset(new ControlPlane(std::move(impl)));
  return *shared;
}

std::unique_ptr<ControlPlane> ControlPlane::start_private(std::string_view scripts_dir) {
  const auto start = std::chrono::steady_clock::now();
  auto impl = std::make_unique<Impl>();
  locate(*impl, scripts_dir);
  std::string folder = impl->base + "/private-XXXXXX";
  if (::mkdtemp(folder.data()) == nullptr) {
    throw std::runtime_error("asop::testing: cannot make a folder under " + impl->base);
  }
  impl->dir = folder;
  impl->owned = true;
  build(*impl);
  up(*impl);
  std::cerr << "asop::testing: started a private control plane in " << impl->dir << " in "
            << elapsed_since(start) << "\n";
  return std::unique_ptr<ControlPlane>(new ControlPlane(std::move(impl)));
}

void ControlPlane::stop(const std::string& component) const {
  if (impl_->scripts.empty())
    throw std::runtime_error("asop::testing: stop() needs a private control plane");
  const std::string pid_file = impl_->dir + "/run/" + component + ".pid";
  // Nothing to do when it is not running (stopped before).
  auto stopped =
      run_command("[ -f " + shell_quote(pid_file) + " ] || exit 0; pid=$(cat " +
                  shell_quote(pid_file) + ") && kill -TERM \"$pid\" 2>/dev/null; " +
                  "while [ -d /proc/$pid ]; do sleep 0.1; done; rm -f " + shell_quote(pid_file));
  if (!stopped.ok()) throw std::runtime_error("asop::testing: cannot stop " + component);
}

void ControlPlane::restart(const std::string& component) const {
  stop(component);
  up(*impl_);
}

void ControlPlane::compact_etcd() const {
  // etcd's JSON gateway: a key outside the API server's prefix moves the revision past every
  // resourceVersion handed out so far; then a physical compaction at that revision.
  std::string url;
  {
    std::ifstream in(impl_->dir + "/etcd-url");
    std::getline(in, url);
  }
  auto put = run_command("curl -fsS -X POST " + shell_quote(url + "/v3/kv/put") +
                         " -d '{\"key\":\"YXNvcC10ZXN0aW5nLWNvbXBhY3Q=\",\"value\":\"MQ==\"}'");
  const auto at = put.out.find("\"revision\":\"");
  if (!put.ok() || at == std::string::npos) {
    throw std::runtime_error("asop::testing: writing to etcd at " + url + ": " + put.out);
  }
  const auto from = at + 12;
  const std::string revision = put.out.substr(from, put.out.find('"', from) - from);
  auto compacted = run_command("curl -fsS -X POST " + shell_quote(url + "/v3/kv/compaction") +
                               " -d '{\"revision\":\"" + revision + "\",\"physical\":true}'");
  if (!compacted.ok()) throw std::runtime_error("asop::testing: compacting etcd: " + compacted.out);
}

std::unique_ptr<ControlPlane> ControlPlane::attach(const std::string& dir) {
  if (!std::filesystem::exists(dir + "/kubeconfig")) {
    throw std::runtime_error("asop::testing: " + dir +
                             " has no kubeconfig: is its control plane up (up.sh DIR)?");
  }
  auto impl = std::make_unique<Impl>();
  impl->dir = dir;
  return std::unique_ptr<ControlPlane>(new ControlPlane(std::move(impl)));
}

const std::string& ControlPlane::dir() const {
  return impl_->dir;
}

std::string ControlPlane::kubeconfig() const {
  return impl_->dir + "/kubeconfig";
}

std::string ControlPlane::server() const {
  std::string server;
  std::FILE* f = std::fopen((impl_->dir + "/server").c_str(), "r");
  if (f) {
    char buf[256];
    if (std::fgets(buf, sizeof buf, f)) server = trimmed(buf);
    std::fclose(f);
  }
  return server;
}

CommandResult ControlPlane::kubectl(const std::string& args, std::string_view input) const {
  return run_command(
      shell_quote(impl_->kubectl) + " --kubeconfig " + shell_quote(kubeconfig()) + " " + args,
      input);
}

void ControlPlane::apply_crds(const std::string& path) const {
  std::lock_guard lock(impl_->mutex);
  if (impl_->crds.count(path)) return;
  auto applied = kubectl("apply -o name -f " + shell_quote(path) + " 2>&1");
  if (!applied.ok()) {
    throw std::runtime_error("asop::testing: kubectl apply -f " + path + ": " + applied.out);
  }
  std::string names;
  for (std::size_t at = 0; at < applied.out.size();) {
    auto end = applied.out.find('\n', at);
    if (end == std::string::npos) end = applied.out.size();
    const auto name = applied.out.substr(at, end - at);
    if (name.rfind("customresourcedefinition", 0) == 0) names += " " + shell_quote(name);
    at = end + 1;
  }
  if (!names.empty()) {
    auto established = kubectl("wait --for=condition=Established --timeout=60s" + names + " 2>&1");
    if (!established.ok()) {
      throw std::runtime_error("asop::testing: CRDs of " + path +
                               " not Established: " + established.out);
    }
  }
  impl_->crds.insert(path);
}

}  // namespace asop::testing
