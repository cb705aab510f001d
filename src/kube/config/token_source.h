// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "kube/config/exec_credential.h"
#include "kube/config/rest_config.h"

namespace kube {

// The credential to put on each request for one RestConfig: a static token, a token file re-read
// when it changes (projected service account tokens rotate), an exec plugin's token, or basic
// auth. The order follows RestConfig: token, token file, exec, basic. Not thread-safe: owned by the
// one io_context thread.
class TokenSource {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  // Reads the token file now, so a missing file fails at start-up (ConfigError). `exec` overrides
  // the provider made from config.exec (tests inject one with a fake clock).
  explicit TokenSource(const RestConfig& config, Clock clock = &std::chrono::steady_clock::now,
                       std::unique_ptr<ExecCredentialProvider> exec = nullptr);

  // What a request carries: the Authorization header value ("Bearer <token>", "Basic <base64>",
  // or empty), and the exec plugin credential it came from (null for other sources), which also
  // names the credential to invalidate() after a 401.
  struct Credentials {
    std::string authorization;
    ExecCredentialProvider::Credential exec;
  };

  // The credentials for the next request. May await the exec plugin (without blocking the
  // io_context) and throw ConfigError when it fails. A token file that becomes unreadable keeps
  // the last good token and logs a warning, as client-go does.
  boost::asio::awaitable<Credentials> credentials();

  // Fetches the credentials now, blocking the calling thread: start-up only, so that a plugin
  // missing from the image is a start-up error. Throws ConfigError.
  void prime();

  // The server answered 401 to a request made with `used`: re-read the token file, and drop the
  // exec credential if it is still the cached one.
  void invalidate(const Credentials& used);

  // The exec provider, for a transport that needs the plugin's client certificate; null when
  // the config has no exec plugin or a static token / token file takes precedence.
  ExecCredentialProvider* exec_provider() { return exec_.get(); }

  // A token file is re-read at least this often even if its stat looks unchanged (client-go: 1
  // min).
  static constexpr std::chrono::seconds kFileRecheck{60};

 private:
  void refresh_file(bool force);
  // The bearer token from a static token or token file, or empty.
  std::string file_or_static_token();
  std::string basic();

  std::string static_token_;
  std::string token_file_;
  std::string username_;
  std::string password_;
  Clock clock_;
  std::unique_ptr<ExecCredentialProvider> exec_;

  // Token file state: what was read, and the stat that identified the content.
  std::string file_token_;
  std::chrono::steady_clock::time_point file_read_at_{};
  bool file_stale_ = false;  // set by invalidate()
  struct FileStamp {
    long long mtime_ns = -1;
    long long size = -1;
    unsigned long long inode = 0;
    bool operator==(const FileStamp&) const = default;
  } file_stamp_;
};

}  // namespace kube
