// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <openssl/ssl.h>

#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string>

#include "kube/config/rest_config.h"

namespace kube {

// The OpenSSL client context for one API server: trust (configured CA PEM, or the system store),
// peer verification (unless insecure-skip-tls-verify), and the client certificate and key.
// Per-connection settings (SNI, expected host name or IP) are applied by HttpConnection.
// Runs at start-up: throws ConfigError naming what is wrong, never printing key material.
// Also checks, on a throw-away SSL object, that the name to verify (tls-server-name, else the host)
// can be set up, so an unusable one fails at start-up.
std::shared_ptr<boost::asio::ssl::context> make_tls_context(const RestConfig& config);

// Sets SNI and the identity the server certificate must prove on `ssl`: a DNS name (SNI set, no
// partial wildcards) or an IP address (checked against IP SANs, no SNI). Returns why it could not
// be set, or empty. Every OpenSSL call is checked: one that fails silently would leave the check
// off, and any certificate the CA signed would be accepted.
std::string set_peer_identity(SSL* ssl, const std::string& name);

}  // namespace kube
