// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string>

#include "kube/config/exec_credential.h"
#include "kube/config/rest_config.h"

namespace kube {

// The OpenSSL context new connections to one https server use, following the client certificate
// as it changes, as client-go does: an exec plugin's clientCertificateData/clientKeyData win over
// the kubeconfig's; client-certificate / client-key files are re-read when their stat (mtime,
// size, inode) changes, checked at every call (certificate rotation). A pair that cannot be used
// (a half-rotated cert and key that do not match) is logged once and the previous one is kept.
// Single-threaded (the io_context's).
class ClientTlsContexts {
 public:
  // Builds the context for the kubeconfig's certificate; throws ConfigError (start-up).
  explicit ClientTlsContexts(RestConfig config);

  // The context for new connections of a request authenticated with `exec` (may be null).
  // `changed` tells whether it differs from the previous call's: pooled connections made with the
  // old certificate must not be reused.
  std::shared_ptr<boost::asio::ssl::context> current(const ExecCredential* exec, bool& changed);

 private:
  struct Stamp {
    long long mtime_ns = -1;
    long long size = -1;
    unsigned long long inode = 0;
    bool operator==(const Stamp&) const = default;
  };
  static Stamp stamp_of(const std::string& path);
  void reload_files();

  RestConfig config_;  // client_cert_pem/client_key_pem: the files' latest content
  std::shared_ptr<boost::asio::ssl::context> ctx_;
  std::string cert_pem_;  // what ctx_ presents
  std::string key_pem_;
  std::string refused_cert_;  // the last pair that could not be used, not retried
  std::string refused_key_;
  Stamp cert_stamp_;
  Stamp key_stamp_;
};

}  // namespace kube
