#include "kube/tls_context.h"

#include <glog/logging.h>

#include <boost/asio/buffer.hpp>

#include "kube/config_error.h"

namespace kube {

namespace ssl = boost::asio::ssl;

std::shared_ptr<ssl::context> make_tls_context(const RestConfig& config) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  // TLS 1.2 is the oldest version kube-apiserver accepts by default; refuse anything older.
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                   ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  boost::system::error_code ec;
  if (config.insecure_skip_tls_verify) {
    LOG(WARNING) << "TLS verification of " << config.authority()
                 << " is disabled (insecure-skip-tls-verify)";
    ctx->set_verify_mode(ssl::verify_none);
  } else {
    ctx->set_verify_mode(ssl::verify_peer);
    if (config.ca_pem.empty()) {
      ctx->set_default_verify_paths(ec);
      if (ec) throw ConfigError("cannot load the system trust store: " + ec.message());
    } else {
      ctx->add_certificate_authority(boost::asio::buffer(config.ca_pem), ec);
      if (ec) {
        throw ConfigError("certificate authority for " + config.authority() +
                          " is not valid PEM: " + ec.message());
      }
    }
  }
  if (!config.client_cert_pem.empty() || !config.client_key_pem.empty()) {
    if (config.client_cert_pem.empty() || config.client_key_pem.empty()) {
      throw ConfigError("client certificate and client key must be given together");
    }
    ctx->use_certificate_chain(boost::asio::buffer(config.client_cert_pem), ec);
    if (ec) throw ConfigError("client certificate is not valid PEM: " + ec.message());
    ctx->use_private_key(boost::asio::buffer(config.client_key_pem), ssl::context::pem, ec);
    if (ec) throw ConfigError("client key is not valid PEM: " + ec.message());
    if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
      throw ConfigError("client key does not match the client certificate");
    }
  }
  return ctx;
}

}  // namespace kube
