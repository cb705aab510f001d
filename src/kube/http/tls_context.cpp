// SPDX-License-Identifier: Apache-2.0
#include "kube/http/tls_context.h"

#include <glog/logging.h>
#include <openssl/x509v3.h>

#include <boost/asio/buffer.hpp>
#include <boost/asio/ip/address.hpp>

#include "kube/config/config_error.h"

namespace kube {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;

std::string set_peer_identity(SSL* ssl, const std::string& name) {
  if (name.empty()) return "no server name to verify";
  if (name.find('\0') != std::string::npos) return "server name contains a NUL byte";
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  if (param == nullptr) return "no verification parameters";
  boost::system::error_code not_ip;
  asio::ip::make_address(name, not_ip);
  if (!not_ip) {
    // An IP-address server is verified against the certificate's IP SANs. OpenSSL refuses a
    // scoped address (fe80::1%eth0): that is an error, not a connection without the check.
    if (X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str()) != 1) {
      return "\"" + name + "\" cannot be verified as an IP address (a zone index is not allowed)";
    }
    return {};
  }
  // SNI is only for names (RFC 6066); the certificate must carry this name as a DNS SAN.
  if (SSL_set_tlsext_host_name(ssl, const_cast<char*>(name.c_str())) != 1) {
    return "\"" + name + "\" is not a usable TLS server name (SNI)";
  }
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  if (X509_VERIFY_PARAM_set1_host(param, name.c_str(), name.size()) != 1) {
    return "\"" + name + "\" is not a usable TLS server name";
  }
  return {};
}

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
  const std::string& name = config.tls_server_name.empty() ? config.host : config.tls_server_name;
  std::unique_ptr<SSL, decltype(&SSL_free)> probe(SSL_new(ctx->native_handle()), &SSL_free);
  if (!probe) throw ConfigError("cannot create a TLS session for " + config.authority());
  if (std::string why = set_peer_identity(probe.get(), name); !why.empty()) {
    throw ConfigError((config.tls_server_name.empty() ? "server host " : "tls-server-name ") + why +
                      " (" + config.source + ")");
  }
  return ctx;
}

}  // namespace kube
