// SPDX-License-Identifier: Apache-2.0
#include "kube/http/client_certificate.h"

#include <glog/logging.h>
#include <sys/stat.h>

#include "kube/config/config_error.h"
#include "kube/config/kubeconfig.h"
#include "kube/http/tls_context.h"

namespace kube {

ClientTlsContexts::ClientTlsContexts(RestConfig config)
    : config_(std::move(config)),
      ctx_(make_tls_context(config_)),
      cert_pem_(config_.client_cert_pem),
      key_pem_(config_.client_key_pem),
      cert_stamp_(stamp_of(config_.client_cert_file)),
      key_stamp_(stamp_of(config_.client_key_file)) {}

ClientTlsContexts::Stamp ClientTlsContexts::stamp_of(const std::string& path) {
  Stamp s;
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return s;
  s.mtime_ns = static_cast<long long>(st.st_mtim.tv_sec) * 1'000'000'000LL + st.st_mtim.tv_nsec;
  s.size = static_cast<long long>(st.st_size);
  s.inode = static_cast<unsigned long long>(st.st_ino);
  return s;
}

void ClientTlsContexts::reload_files() {
  if (config_.client_cert_file.empty() && config_.client_key_file.empty()) return;
  const Stamp cert = stamp_of(config_.client_cert_file);
  const Stamp key = stamp_of(config_.client_key_file);
  if (cert == cert_stamp_ && key == key_stamp_) return;
  try {
    std::string cert_pem = config_.client_cert_pem;
    std::string key_pem = config_.client_key_pem;
    if (!config_.client_cert_file.empty()) {
      cert_pem = read_config_file(config_.client_cert_file,
                                  "client-certificate " + config_.client_cert_file);
    }
    if (!config_.client_key_file.empty()) {
      key_pem = read_config_file(config_.client_key_file, "client-key " + config_.client_key_file);
    }
    config_.client_cert_pem = std::move(cert_pem);
    config_.client_key_pem = std::move(key_pem);
  } catch (const ConfigError& e) {
    LOG(WARNING) << e.what() << "; keeping the previous client certificate";
  }
  cert_stamp_ = cert;
  key_stamp_ = key;
}

std::shared_ptr<boost::asio::ssl::context> ClientTlsContexts::current(const ExecCredential* exec,
                                                                      bool& changed) {
  changed = false;
  const bool from_exec = exec && !exec->client_cert_pem.empty();
  if (!from_exec) reload_files();
  const std::string& cert = from_exec ? exec->client_cert_pem : config_.client_cert_pem;
  const std::string& key = from_exec ? exec->client_key_pem : config_.client_key_pem;
  if (cert == cert_pem_ && key == key_pem_) return ctx_;
  if (cert == refused_cert_ && key == refused_key_) return ctx_;
  RestConfig next = config_;
  next.client_cert_pem = cert;
  next.client_key_pem = key;
  try {
    ctx_ = make_tls_context(next);
  } catch (const ConfigError& e) {
    LOG(WARNING) << "new client certificate for " << config_.authority() << " ("
                 << (from_exec ? "exec plugin" : "kubeconfig files")
                 << ") is unusable: " << e.what() << "; keeping the previous one";
    refused_cert_ = cert;
    refused_key_ = key;
    return ctx_;
  }
  cert_pem_ = cert;
  key_pem_ = key;
  changed = true;
  LOG(INFO) << "client certificate for " << config_.authority() << " changed ("
            << (from_exec ? "exec plugin" : "kubeconfig files")
            << "); new connections present it, pooled ones are closed";
  return ctx_;
}

}  // namespace kube
