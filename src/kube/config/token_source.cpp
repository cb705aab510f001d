// SPDX-License-Identifier: Apache-2.0
#include "kube/config/token_source.h"

#include <glog/logging.h>
#include <sys/stat.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <cctype>

#include "kube/config/config_error.h"
#include "kube/config/kubeconfig.h"
#include "kube/core/text.h"

namespace kube {
namespace {}  // namespace

TokenSource::TokenSource(const RestConfig& config, Clock clock,
                         std::unique_ptr<ExecCredentialProvider> exec)
    : static_token_(config.token),
      token_file_(config.token_file),
      username_(config.username),
      password_(config.password),
      clock_(std::move(clock)) {
  // Precedence as in client-go: a static token or token file means the exec plugin never runs.
  if (static_token_.empty() && token_file_.empty() && config.exec) {
    exec_ = exec ? std::move(exec) : std::make_unique<ExecCredentialProvider>(config);
  }
  if (static_token_.empty() && !token_file_.empty()) {
    refresh_file(true);
    if (file_token_.empty()) {
      throw ConfigError("token file " + token_file_ + " (" + config.source + "): file is empty");
    }
  }
}

void TokenSource::refresh_file(bool force) {
  struct stat st {};
  FileStamp stamp;
  if (::stat(token_file_.c_str(), &st) == 0) {
    stamp.mtime_ns =
        static_cast<long long>(st.st_mtim.tv_sec) * 1'000'000'000LL + st.st_mtim.tv_nsec;
    stamp.size = static_cast<long long>(st.st_size);
    stamp.inode = static_cast<unsigned long long>(st.st_ino);
  }
  const auto now = clock_();
  // The kubelet swaps projected tokens through a symlink, which changes the inode and mtime; the
  // periodic re-read covers a rewrite that keeps all three (coarse mtime on some filesystems).
  if (!force && !file_stale_ && !file_token_.empty() && stamp == file_stamp_ &&
      now - file_read_at_ < kFileRecheck) {
    return;
  }
  std::string token;
  try {
    token = trim(read_config_file(token_file_, "token file " + token_file_));
  } catch (const ConfigError& e) {
    if (file_token_.empty()) throw;
    LOG(WARNING) << e.what() << "; keeping the previous token";
    file_read_at_ = now;
    return;
  }
  if (token.empty() && !file_token_.empty()) {
    // Caught mid-rewrite, or emptied by mistake: the previous token is the better bet.
    LOG(WARNING) << "token file " << token_file_ << " is empty; keeping the previous token";
  } else {
    file_token_ = std::move(token);
  }
  file_stamp_ = stamp;
  file_read_at_ = now;
  file_stale_ = false;
}

std::string TokenSource::file_or_static_token() {
  if (!static_token_.empty()) return static_token_;
  if (!token_file_.empty()) {
    refresh_file(false);
    return file_token_;
  }
  return {};
}

std::string TokenSource::basic() {
  return username_.empty() ? std::string() : "Basic " + encode_base64(username_ + ":" + password_);
}

boost::asio::awaitable<TokenSource::Credentials> TokenSource::credentials() {
  Credentials c;
  if (std::string t = file_or_static_token(); !t.empty()) {
    c.authorization = "Bearer " + t;
  } else if (exec_) {
    c.exec = co_await exec_->get();
    if (!c.exec->token.empty()) c.authorization = "Bearer " + c.exec->token;
  }
  if (c.authorization.empty()) c.authorization = basic();
  co_return c;
}

void TokenSource::prime() {
  boost::asio::io_context io;
  auto done = boost::asio::co_spawn(io, credentials(), boost::asio::use_future);
  io.run();
  done.get();
}

void TokenSource::invalidate(const Credentials& used) {
  if (exec_) exec_->invalidate(used.exec);
  file_stale_ = true;
}

}  // namespace kube
