// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <filesystem>
#include <memory>
#include <string>

#include "ctrl/base/clock.h"

namespace ctrl {

// The certificate an HTTPS server presents, as controller-runtime's certwatcher keeps it: read
// from cert_dir/cert_name and cert_dir/key_name, and read again when either file changes (checked
// at most every recheck_interval, when a connection asks for the context), so a certificate that
// cert-manager rotates is served without a restart. A rotation caught half-written (a pair that
// does not match) keeps the previous certificate and is tried again later. Without a cert_dir a
// self-signed certificate (ECDSA P-256, one year, for localhost and 127.0.0.1) is made in memory
// at construction, as controller-runtime does for secure metrics.
class ServingCertificate {
 public:
  struct Options {
    Options() = default;   // not an aggregate: GCC 12 co_await temporaries (kube/list_options.h)
    std::string cert_dir;  // empty: self-signed in memory
    std::string cert_name = "tls.crt";
    std::string key_name = "tls.key";
    Clock::Duration recheck_interval = std::chrono::seconds(10);
  };

  // Throws std::runtime_error naming the file when the certificate cannot be loaded at start.
  ServingCertificate(Options options, const Clock& clock);

  // The TLS server context for a new connection; connections keep the one they started with.
  std::shared_ptr<boost::asio::ssl::context> context();
  // How many times the files were loaded (1 after construction with a cert_dir).
  int loads() const { return loads_; }

 private:
  std::shared_ptr<boost::asio::ssl::context> load_files() const;
  std::filesystem::file_time_type newest_change() const;

  Options options_;
  const Clock& clock_;
  std::shared_ptr<boost::asio::ssl::context> context_;
  std::filesystem::file_time_type loaded_change_{};
  Clock::TimePoint next_check_{};
  int loads_ = 0;
};

// A TLS 1.2+ server context presenting a fresh self-signed certificate with this common name, for
// localhost, 127.0.0.1 and ::1. Exposed for tests.
std::shared_ptr<boost::asio::ssl::context> self_signed_context(const std::string& common_name);

}  // namespace ctrl
